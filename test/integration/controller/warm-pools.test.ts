/**
 * Warm pools against the real API server (docs/warm-pools.md): a pool keeps its replicas ready and unclaimed,
 * scales through /scale, never touches a claimed sandbox (bound here with the binding's JSON Patch, as the
 * operator's identity), rolls stale unclaimed sandboxes under Recreate and not under OnReplenish, and its
 * deletion leaves a claimed sandbox alone. Its unclaimed sandboxes outlive their cleanup TTL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import {
  ANNOTATIONS,
  API_VERSION,
  GROUP,
  LABELS,
  SANDBOX,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
  SESSION_REFERENCE,
  VERSION,
} from '../../../operator/api/names.ts';
import type { Sandbox } from '../../../operator/api/objects.ts';
import type { SandboxWarmPool } from '../../../operator/api/sandbox-warm-pool.ts';
import { kubectlOk, testNamespace } from '../../harness/kube.ts';
import {
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  restrictedKubeConfig,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('warm-pools');
let operator: RunningOperator;

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator.stop();
});

const local = () => inject('clusterKind') === 'local';
const apply = (manifest: object) => kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(manifest) });

function template(name: string, podAnnotations: Record<string, string> = {}) {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX_TEMPLATE.kind,
    metadata: { name, namespace },
    spec: {
      // A TTL the pool's unclaimed sandboxes must outlive: they are unreferenced by definition.
      cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 1 },
      podTemplate: {
        metadata: { annotations: podAnnotations },
        spec: {
          ...(local() ? { nodeName: kwokNodeName(0) } : {}),
          containers: [
            { name: 'agent', image: local() ? 'registry.example/agent:1' : 'registry.k8s.io/pause:3.10' },
          ],
        },
      },
    },
  };
}

const pool = (name: string, templateName: string, replicas: number, strategy = 'OnReplenish') => ({
  apiVersion: API_VERSION,
  kind: SANDBOX_WARM_POOL.kind,
  metadata: { name, namespace },
  spec: { templateRef: { name: templateName }, replicas, updateStrategy: { type: strategy } },
});

async function poolSandboxes(poolName: string): Promise<Sandbox[]> {
  const list = (await customObjects().listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX.plural,
    labelSelector: `${LABELS.warmPool}=${poolName}`,
  })) as { items: Sandbox[] };
  return list.items;
}

const unclaimed = (sandboxes: Sandbox[]) =>
  sandboxes.filter(
    (s) =>
      s.metadata.labels?.[LABELS.sandboxClaim] === undefined && s.metadata.deletionTimestamp === undefined,
  );
const isReady = (s: Sandbox) => s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

async function getPool(name: string): Promise<SandboxWarmPool> {
  return (await customObjects().getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX_WARM_POOL.plural,
    name,
  })) as SandboxWarmPool;
}

/** Waits until the pool has exactly `count` unclaimed, undeleted sandboxes, all Ready, and says so in status. */
async function untilReady(name: string, count: number): Promise<Sandbox[]> {
  return eventually(`${name}: ${count} ready unclaimed`, async () => {
    const sandboxes = unclaimed(await poolSandboxes(name));
    const status = (await getPool(name)).status;
    return sandboxes.length === count &&
      sandboxes.every(isReady) &&
      status?.readyReplicas === count &&
      status.replicas === count
      ? sandboxes
      : pending({ names: sandboxes.map((s) => s.metadata.name), status });
  });
}

/**
 * The binding's first two steps (docs/warm-pools.md), as the operator's identity: claim label on, pool owner
 * off, testing the version read (the operator may write the sandbox's status meanwhile: then read it again);
 * then the claim's SessionReference, so the claimed sandbox is referenced as a bound one is (without it, the
 * template's 1 s cleanup TTL would rightly take it).
 */
async function bind(sandbox: Sandbox, claim: string): Promise<void> {
  const api = restrictedKubeConfig().makeApiClient(CustomObjectsApi);
  const target = {
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX.plural,
    name: sandbox.metadata.name,
  };
  await eventually(`${sandbox.metadata.name} bound`, async () => {
    const current = (await customObjects().getNamespacedCustomObject(target)) as Sandbox;
    try {
      await api.patchNamespacedCustomObject(
        {
          ...target,
          body: [
            { op: 'test', path: '/metadata/resourceVersion', value: current.metadata.resourceVersion },
            { op: 'add', path: `/metadata/labels/${LABELS.sandboxClaim.replace('/', '~1')}`, value: claim },
            { op: 'remove', path: '/metadata/ownerReferences/0' },
          ],
        },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      return true;
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code === 409 || code === 422) return pending({ changedSince: current.metadata.resourceVersion });
      throw error;
    }
  });
  await api.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SESSION_REFERENCE.plural,
    body: {
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: { name: `${claim}-reference`, namespace, labels: { [LABELS.sandboxClaim]: claim } },
      spec: { sandbox: sandbox.metadata.name, session: `session-${claim}`, route: 'r', role: 'Root' },
    },
  });
}

const scale = (name: string, replicas: number) =>
  kubectlOk([
    'scale',
    `${SANDBOX_WARM_POOL.plural}.${GROUP}`,
    name,
    '-n',
    namespace,
    `--replicas=${replicas}`,
  ]);

describe('a warm pool', () => {
  it('becomes 3 ready, unclaimed sandboxes of its template, which outlive their cleanup TTL', async () => {
    await apply(template('python-agent'));
    await apply(pool('python-pool', 'python-agent', 3));
    const sandboxes = await untilReady('python-pool', 3);
    for (const sandbox of sandboxes) {
      expect(sandbox.metadata.name).toMatch(/^python-pool-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(sandbox.metadata.labels?.[LABELS.template]).toBe('python-agent');
      expect(sandbox.metadata.annotations?.[ANNOTATIONS.templateGeneration]).toBe('1');
      expect(sandbox.spec.worktree).toBeUndefined();
      expect(sandbox.spec.cleanup).toEqual({
        policy: 'DeleteWhenUnreferenced',
        ttlSecondsAfterUnreferenced: 1,
      });
      expect((sandbox.metadata as { ownerReferences?: unknown[] }).ownerReferences).toMatchObject([
        { kind: SANDBOX_WARM_POOL.kind, name: 'python-pool', controller: true },
      ]);
    }
    expect((await getPool('python-pool')).status).toMatchObject({
      observedGeneration: 1,
      selector: `${LABELS.warmPool}=python-pool,!${LABELS.sandboxClaim}`,
      conditions: [expect.objectContaining({ type: 'Ready', status: 'True' })],
    });
    // Past the 1 s TTL (and a resync's worth of turns), the same three are still there, undeleted.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const later = unclaimed(await poolSandboxes('python-pool'));
    expect(later.map((s) => s.metadata.uid).sort()).toEqual(sandboxes.map((s) => s.metadata.uid).sort());
  });

  it('scales up and down through /scale', async () => {
    await scale('python-pool', 5);
    await untilReady('python-pool', 5);
    await scale('python-pool', 2);
    await untilReady('python-pool', 2);
  });

  it('never deletes a claimed sandbox when it shrinks, and stops counting it', async () => {
    const [claimed] = await untilReady('python-pool', 2);
    await bind(claimed!, 'claim-a');
    await untilReady('python-pool', 2); // replenished: the claimed one no longer counts
    await scale('python-pool', 0);
    await untilReady('python-pool', 0);
    // The unclaimed ones go (their deletion released: no reference); the claimed one stays, undeleted.
    const left = await eventually('only the claimed sandbox left', async () => {
      const sandboxes = await poolSandboxes('python-pool');
      return sandboxes.length === 1 ? sandboxes : pending({ names: sandboxes.map((s) => s.metadata.name) });
    });
    expect(left.map((s) => s.metadata.name)).toEqual([claimed!.metadata.name]);
    expect(left[0]!.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('a template change', () => {
  it('replaces stale unclaimed sandboxes under Recreate, leaves them under OnReplenish, never a claimed one', async () => {
    await apply(template('rolling'));
    await apply(pool('keep', 'rolling', 2, 'OnReplenish'));
    await apply(pool('renew', 'rolling', 2, 'Recreate'));
    const kept = await untilReady('keep', 2);
    const [claimed] = await untilReady('renew', 2);
    await bind(claimed!, 'claim-b');
    await untilReady('renew', 2);
    const before = unclaimed(await poolSandboxes('renew'));

    await apply(template('rolling', { 'example.com/rev': '2' }));
    const after = await eventually('renew rolled to generation 2', async () => {
      const current = unclaimed(await poolSandboxes('renew'));
      const generations = current.map((s) => s.metadata.annotations?.[ANNOTATIONS.templateGeneration]);
      return current.length === 2 && current.every(isReady) && generations.every((g) => g === '2')
        ? current
        : pending({ generations, ready: current.map(isReady) });
    });
    const names = (list: Sandbox[]) => list.map((s) => s.metadata.name).sort();
    expect(names(after).filter((name) => names(before).includes(name))).toEqual([]);
    // OnReplenish: the same sandboxes, still of generation 1.
    const keep = unclaimed(await poolSandboxes('keep'));
    expect(names(keep)).toEqual(names(kept));
    expect(keep.every((s) => s.metadata.annotations?.[ANNOTATIONS.templateGeneration] === '1')).toBe(true);
    // The claimed one: untouched, of generation 1.
    const stillClaimed = (await poolSandboxes('renew')).find(
      (s) => s.metadata.name === claimed!.metadata.name,
    );
    expect(stillClaimed?.metadata.deletionTimestamp).toBeUndefined();
    expect(stillClaimed?.metadata.annotations?.[ANNOTATIONS.templateGeneration]).toBe('1');
  });

  it('deleting the pool leaves its claimed sandbox untouched', async () => {
    const claimed = (await poolSandboxes('renew')).find((s) => s.metadata.labels?.[LABELS.sandboxClaim]);
    await kubectlOk([
      'delete',
      `${SANDBOX_WARM_POOL.plural}.${GROUP}`,
      'renew',
      '-n',
      namespace,
      '--wait=true',
    ]);
    const left = await eventually('unclaimed sandboxes collected', async () => {
      const sandboxes = await poolSandboxes('renew');
      return sandboxes.length === 1 ? sandboxes : pending({ names: sandboxes.map((s) => s.metadata.name) });
    });
    expect(left[0]!.metadata.uid).toBe(claimed!.metadata.uid);
    expect(left[0]!.metadata.deletionTimestamp).toBeUndefined();
  });
});
