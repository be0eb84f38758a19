/**
 * The warm pools' labels (docs/warm-pools.md) are the operator's: a tenant with the built-in `edit` role may
 * not plant a sandbox in a pool, claim a pool's sandbox by label, unclaim a bound one (its pool would then
 * delete it), nor label a SessionReference as a sandbox claim's. The operator's identity may bind an unclaimed
 * pool sandbox (claim label on, pool owner off) and delete an unclaimed one, but not a claimed one.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  GROUP,
  LABELS,
  SANDBOX,
  SANDBOX_WARM_POOL,
  VERSION,
} from '../../../operator/api/names.ts';
import { bindingPatch } from '../../../operator/controller/binding/binding-patch.ts';
import { kubeBindingPorts } from '../../../operator/controller/binding/kube-binding-api.ts';
import { bindingSandboxOf } from '../../../operator/controller/binding/records.ts';
import { kubeClients } from '../../../operator/kube/clients.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { asTenant, grantTenantEdit } from '../../harness/tenant.ts';
import { getSandbox, sandboxManifest } from '../controller/fixtures.ts';
import { eventually, grantOperatorRbac, pending, restrictedKubeConfig } from '../controller/operator.ts';

const namespace = testNamespace('pool-labels');
const REFUSED = 'is the operator’s';

// No operator runs here: the Sandboxes get no finalizer, and go with the namespace. The pool owns its
// unclaimed sandboxes (the garbage collector would delete one whose owner does not exist).
let poolOwner: Record<string, unknown>;
beforeAll(async () => {
  await grantOperatorRbac();
  await grantTenantEdit(namespace);
  const pool = JSON.parse(
    await kubectlOk(['create', '-o', 'json', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: API_VERSION,
        kind: SANDBOX_WARM_POOL.kind,
        metadata: { name: 'pool', namespace },
        spec: { templateRef: { name: 'absent' }, replicas: 0 },
      }),
    }),
  ) as { metadata: { uid: string } };
  poolOwner = {
    apiVersion: API_VERSION,
    kind: SANDBOX_WARM_POOL.kind,
    name: 'pool',
    uid: pool.metadata.uid,
    controller: true,
  };
});

/**
 * A pool sandbox as the operator makes it (under its identity: only it may set the pool's labels). The
 * admission parameters naming it were just written (grantOperatorRbac): until the API server's policy reads
 * them, it is refused as anyone else.
 */
async function poolSandbox(name: string, claim?: string, finalizers: string[] = []): Promise<void> {
  const manifest = sandboxManifest(namespace, name);
  const input = JSON.stringify({
    ...manifest,
    metadata: {
      ...manifest.metadata,
      labels: { [LABELS.warmPool]: 'pool', ...(claim ? { [LABELS.sandboxClaim]: claim } : {}) },
      annotations: { [ANNOTATIONS.templateGeneration]: '1' },
      ownerReferences: claim ? [] : [poolOwner],
      finalizers,
    },
  });
  await eventually(`pool sandbox ${name} created as the operator`, async () => {
    const result = await kubectl(['create', '-f', '-'], { restricted: true, input });
    if (result.exitCode === 0) return true;
    if (result.stderr.includes(REFUSED)) return pending(result.stderr);
    throw new Error(result.stderr);
  });
}

const operatorApi = () => restrictedKubeConfig().makeApiClient(CustomObjectsApi);
const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const claimPath = `/metadata/labels/${LABELS.sandboxClaim.replace('/', '~1')}`;

describe('a tenant with edit', () => {
  it('may not create a sandbox in a pool, nor one already claimed', async () => {
    for (const labels of [{ [LABELS.warmPool]: 'pool' }, { [LABELS.sandboxClaim]: 'mine' }]) {
      const manifest = sandboxManifest(namespace, 'planted');
      const result = await asTenant(['create', '-f', '-'], {
        input: JSON.stringify({ ...manifest, metadata: { ...manifest.metadata, labels } }),
      });
      expect(result.exitCode, result.stdout).not.toBe(0);
      expect(result.stderr).toContain(REFUSED);
      expect(result.stderr).toContain(Object.keys(labels)[0]);
    }
  });

  it('may not label a pool sandbox as claimed, nor unclaim a bound one', async () => {
    await poolSandbox('waiting');
    const claimed = await asTenant([
      'label',
      'sandbox',
      'waiting',
      '-n',
      namespace,
      `${LABELS.sandboxClaim}=mine`,
    ]);
    expect(claimed.exitCode, claimed.stdout).not.toBe(0);
    expect(claimed.stderr).toContain(REFUSED);
    await poolSandbox('bound', 'claim-a');
    const unclaimed = await asTenant([
      'label',
      'sandbox',
      'bound',
      '-n',
      namespace,
      `${LABELS.sandboxClaim}-`,
    ]);
    expect(unclaimed.exitCode, unclaimed.stdout).not.toBe(0);
    expect(unclaimed.stderr).toContain(REFUSED);
    const moved = await asTenant([
      'label',
      'sandbox',
      'bound',
      '-n',
      namespace,
      '--overwrite',
      `${LABELS.warmPool}=other`,
    ]);
    expect(moved.exitCode, moved.stdout).not.toBe(0);
    expect((await getSandbox(namespace, 'bound'))?.metadata.labels).toEqual({
      [LABELS.warmPool]: 'pool',
      [LABELS.sandboxClaim]: 'claim-a',
    });
  });

  it('may not label a SessionReference as a sandbox claim’s', async () => {
    const result = await asTenant(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: API_VERSION,
        kind: 'SessionReference',
        metadata: { name: 'by-claim', namespace, labels: { [LABELS.sandboxClaim]: 'claim-a' } },
        spec: { sandbox: 'waiting', session: 'workspace_1', route: 'r', role: 'Root' },
      }),
    });
    expect(result.exitCode, result.stdout).not.toBe(0);
    expect(result.stderr).toContain(REFUSED);
  });
});

describe('the operator’s identity', () => {
  it('binds an unclaimed pool sandbox: claim label on, pool owner off, in one JSON Patch', async () => {
    await poolSandbox('to-bind');
    const before = await getSandbox(namespace, 'to-bind');
    await operatorApi().patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        name: 'to-bind',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: before?.metadata.resourceVersion },
          { op: 'add', path: claimPath, value: 'claim-b' },
          { op: 'remove', path: '/metadata/ownerReferences/0' },
        ],
      },
      JSON_PATCH,
    );
    const after = await getSandbox(namespace, 'to-bind');
    expect(after?.metadata.labels?.[LABELS.sandboxClaim]).toBe('claim-b');
  });

  // The binding patch is sent after the claim's reference and is the attach's fence read (bind.ts): the API
  // server must refuse it on a sandbox being deleted or fenced, and apply it on an open one whose status
  // changed since it was read (no resourceVersion test).
  it('the binding patch lands only on an open sandbox: deleting or fenced, it is Lost', async () => {
    const ports = kubeBindingPorts(kubeClients(restrictedKubeConfig()), { record: () => undefined });
    const read = async (name: string) => {
      const sandbox = bindingSandboxOf(await getSandbox(namespace, name));
      if (sandbox === undefined) throw new Error(`sandbox ${name} not read`);
      return sandbox;
    };
    const patchFor = async (name: string) => {
      const sandbox = await read(name);
      return {
        sandbox,
        ops: bindingPatch(
          { uid: sandbox.uid, poolOwner: { index: 0, uid: poolOwner['uid'] as string } },
          'claim-f',
        ),
      };
    };

    await poolSandbox('fence-open');
    const open = await patchFor('fence-open');
    await kubectlOk(['annotate', 'sandbox', 'fence-open', '-n', namespace, 'example.com/note=changed']);
    const bound = await ports.sandboxes.bind(open.sandbox, open.ops);
    expect(bound).toMatchObject({ name: 'fence-open', claim: 'claim-f', owners: [] });

    await poolSandbox('fence-raised');
    const fenced = await patchFor('fence-raised');
    await kubectlOk([
      'annotate',
      'sandbox',
      'fence-raised',
      '-n',
      namespace,
      `${ANNOTATIONS.cleanupFence}=2026-12-03T15:00:00Z`,
    ]);
    expect(await ports.sandboxes.bind(fenced.sandbox, fenced.ops)).toEqual({ kind: 'Lost' });
    expect((await read('fence-raised')).claim).toBeUndefined();

    await poolSandbox('fence-deleting', undefined, [EXCLUSIVITY_FINALIZER]);
    const deleting = await patchFor('fence-deleting');
    await kubectlOk(['delete', 'sandbox', 'fence-deleting', '-n', namespace, '--wait=false'], {
      restricted: true,
    });
    expect(await ports.sandboxes.bind(deleting.sandbox, deleting.ops)).toEqual({ kind: 'Lost' });
    expect((await read('fence-deleting')).claim).toBeUndefined();
  });

  // A claimed sandbox's DELETE is the claim's release (issue 28's binding): allowed, and decided as every
  // deletion is (other sessions' references keep it). Only the pool controller keeps a pool off it.
  it('may not unclaim a bound sandbox; may delete it, as its claim’s release', async () => {
    await poolSandbox('kept', 'claim-c');
    const unclaim = operatorApi().patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        name: 'kept',
        body: [{ op: 'remove', path: claimPath }],
      },
      JSON_PATCH,
    );
    await expect(unclaim).rejects.toThrow(/the operator changes only a Sandbox’s finalizer/);
    const deleted = await kubectl(['delete', 'sandbox', 'kept', '-n', namespace, '--wait=false'], {
      restricted: true,
    });
    expect(deleted).toMatchObject({ exitCode: 0 });
    await poolSandbox('spare');
    await kubectlOk(['delete', 'sandbox', 'spare', '-n', namespace, '--wait=false'], { restricted: true });
  });
});
