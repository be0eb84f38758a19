/**
 * What a leaked operator token may still do to Sandboxes and SessionReferences (issue 26, item 1: the
 * reference deletes; and the Sandbox DELETE held back before), against the real API server as the restricted
 * operator user. The operator deletes a Sandbox only for automatic cleanup, changes only its finalizer and the
 * cleanup fence, and never writes a reference but to delete it; each delete of an attached one is audited.
 * The user is given more RBAC here than the chart grants (a Role over references and their status, `delete`
 * on Sandboxes), since the bounds must hold whatever RBAC says.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_PARAMS } from '../../../operator/api/admission.ts';
import { DEFAULT_NAMESPACE } from '../../../operator/api/render-crds.ts';
import { OPERATOR_BOUNDS_POLICY } from '../../../operator/api/operator-bounds.ts';
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  LABELS,
  SESSION_REFERENCE,
} from '../../../operator/api/names.ts';
import { kubeConfig, kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { auditAnnotations } from '../../harness/tenant.ts';
import { RESTRICTED_USER } from '@sandbox-operator/local-cluster';
import {
  createReference,
  createSandbox,
  getReference,
  getSandbox,
  sandboxManifest,
} from '../controller/fixtures.ts';
import { eventually, grantOperatorRbac, pending } from '../controller/operator.ts';

const namespace = testNamespace('operator-writes');
const asOperator = (args: string[]) => kubectl([...args, '-n', namespace], { restricted: true });
const FENCE = { [ANNOTATIONS.cleanupFence]: '2026-12-03T00:00:00Z' };
const CLEANUP = { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 0 };

// No operator runs here: the Sandboxes carry no finalizer unless a test gives one, and go with the namespace.
beforeAll(async () => {
  await grantOperatorRbac();
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'operator-more', namespace },
    rules: [
      {
        apiGroups: ['sandbox.agents.dev'],
        resources: ['sessionreferences', 'sessionreferences/status', 'sandboxes'],
        verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
      },
    ],
  };
  await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(role) });
  await kubectlOk([
    'create',
    'rolebinding',
    'operator-more',
    '-n',
    namespace,
    '--role=operator-more',
    `--user=${RESTRICTED_USER}`,
  ]);
});

describe('Sandboxes the operator’s identity deletes', () => {
  it('are refused when their owner chose Retain', async () => {
    await createSandbox(namespace, 'kept', { worktree: 'wt-1', annotations: FENCE });
    const deleted = await asOperator(['delete', 'sandbox', 'kept', '--wait=false']);
    expect(deleted.stderr).toContain('the operator deletes a Sandbox only for automatic cleanup');
    expect(await getSandbox(namespace, 'kept')).toBeDefined();
  });

  it('are refused under DeleteWhenUnreferenced until the cleanup fence is raised', async () => {
    await createSandbox(namespace, 'unfenced', { worktree: 'wt-1', cleanup: CLEANUP });
    const deleted = await asOperator(['delete', 'sandbox', 'unfenced', '--wait=false']);
    expect(deleted.stderr).toContain('the operator deletes a Sandbox only for automatic cleanup');
  });

  it('are the automatic cleanup’s: DeleteWhenUnreferenced, fenced', async () => {
    await createSandbox(namespace, 'cleaned', { worktree: 'wt-1', cleanup: CLEANUP, annotations: FENCE });
    const deleted = await asOperator(['delete', 'sandbox', 'cleaned', '--wait=false']);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
  });
});

describe('Sandboxes the operator’s identity changes', () => {
  const patch = (name: string, body: object) =>
    asOperator(['patch', 'sandbox', name, '--type=merge', '-p', JSON.stringify(body)]);

  it('take its finalizer and the cleanup fence', async () => {
    await createSandbox(namespace, 'finalized', { worktree: 'wt-1' });
    const finalized = await patch('finalized', { metadata: { finalizers: [EXCLUSIVITY_FINALIZER] } });
    expect(finalized.exitCode, finalized.stderr).toBe(0);
    const fenced = await patch('finalized', { metadata: { annotations: FENCE } });
    expect(fenced.exitCode, fenced.stderr).toBe(0);
    const released = await asOperator([
      'patch',
      'sandbox',
      'finalized',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    expect(released.exitCode, released.stderr).toBe(0);
  });

  it.each([
    ['a label', { metadata: { labels: { team: 'b' } } }],
    ['another annotation', { metadata: { annotations: { 'example.com/note': 'x' } } }],
    ['a finalizer not its own', { metadata: { finalizers: ['example.com/hold'] } }],
    [
      'an owner reference',
      {
        metadata: {
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: 'f'.repeat(8) }],
        },
      },
    ],
  ])('keep %s as it was', async (what, body) => {
    const name = `meta-${what.replaceAll(/[^a-z]/g, '')}`;
    await createSandbox(namespace, name, { worktree: 'wt-1' });
    const patched = await patch(name, body);
    expect(patched.stderr).toContain('the operator changes only a Sandbox’s finalizer');
  });
});

describe('SessionReferences the operator’s identity writes', () => {
  it('are never created nor changed: a token cannot detach an attached reference', async () => {
    await createReference(namespace, 'attached-a', {
      sandbox: 'shared',
      session: 'workspace_a',
      worktree: 'wt-2',
    });
    const detached = await asOperator([
      'patch',
      'sessionreference',
      'attached-a',
      '--type=merge',
      '-p',
      '{"spec":{"state":"Detached"}}',
    ]);
    expect(detached.stderr).toContain('the operator never creates or changes a SessionReference');
    const status = await asOperator([
      'patch',
      'sessionreference',
      'attached-a',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"detachedAt":"2026-12-03T00:00:00Z"}}',
    ]);
    expect(status.stderr).toContain('the operator never creates or changes a SessionReference');
    const reference = {
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: { name: 'squatted', namespace },
      spec: { sandbox: 'shared', session: 'workspace_s', worktree: 'wt-1', route: 'r', role: 'Root' },
    };
    const created = await kubectl(['create', '-f', '-'], {
      restricted: true,
      input: JSON.stringify(reference),
    });
    expect(created.stderr).toContain('the operator never creates or changes a SessionReference');
    expect((await getReference(namespace, 'attached-a'))?.spec.state).toBe('Attached');
  });

  it('have only status.disruption written: the drain notice, set and removed, and nothing beside it', async () => {
    await createReference(namespace, 'told-d', {
      sandbox: 'shared',
      session: 'workspace_d',
      worktree: 'wt-2',
    });
    // The agent host's turn is there first; the operator's notice must leave it as it is.
    await kubectlOk([
      'patch',
      'sessionreference',
      'told-d',
      '-n',
      namespace,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"turn":{"id":"t-1","phase":"Running"}}}',
    ]);
    const notice = { nodes: ['node-a'], since: '2026-12-03T07:00:00Z', movesBy: '2026-12-03T07:05:00Z' };
    const patchStatus = (status: object) =>
      asOperator([
        'patch',
        'sessionreference',
        'told-d',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status }),
      ]);
    const set = await patchStatus({ disruption: notice });
    expect(set, set.stderr).toMatchObject({ exitCode: 0 });
    expect((await getReference(namespace, 'told-d'))?.status).toMatchObject({
      disruption: notice,
      turn: { id: 't-1', phase: 'Running' },
    });
    // Beside the notice, the session's turn, its ended turns, its shells or its tombstone time: refused.
    for (const other of [
      { turn: { id: 't-1', phase: 'Completed' } },
      { endedTurns: [{ id: 't-0', phase: 'Completed' }] },
      { shells: { retiredTurn: 't-1', retiredGroups: 0, unreachable: 0 } },
      { detachedAt: '2026-12-03T07:01:00Z' },
    ]) {
      const refused = await patchStatus({ disruption: { ...notice, nodes: ['node-b'] }, ...other });
      expect(refused.stderr, JSON.stringify(other)).toContain(
        'it only deletes them and writes their status.disruption',
      );
    }
    // The turn removed (not only changed) is refused too.
    const dropped = await patchStatus({ turn: null });
    expect(dropped.stderr).toContain('writes their status.disruption; refused UPDATE of sessionreference');
    const cleared = await patchStatus({ disruption: null });
    expect(cleared, cleared.stderr).toMatchObject({ exitCode: 0 });
    const after = await getReference(namespace, 'told-d');
    expect(after?.status?.disruption).toBeUndefined();
    expect(after?.status?.turn).toMatchObject({ id: 't-1', phase: 'Running' });
    expect(after?.spec.state).toBe('Attached');
  });

  it('are deleted as tombstones without a trace, and as attached ones with an audit record', async () => {
    await createReference(namespace, 'tombstone-b', {
      sandbox: 'shared',
      session: 'workspace_b',
      worktree: 'wt-1',
      state: 'Detached',
    });
    await createReference(namespace, 'attached-c', {
      sandbox: 'shared',
      session: 'workspace_c',
      worktree: 'wt-3',
    });
    for (const name of ['tombstone-b', 'attached-c']) {
      const deleted = await asOperator(['delete', 'sessionreference', name]);
      expect(deleted.exitCode, deleted.stderr).toBe(0);
    }
    const key = `${OPERATOR_BOUNDS_POLICY}/attached-reference-deleted`;
    const recorded = await eventually('the audit event of the attached reference’s delete', async () => {
      const value = (await auditAnnotations('attached-c')).map((a) => a[key]).find((v) => v);
      return value ?? pending(await auditAnnotations('attached-c'));
    });
    expect(recorded).toContain(
      `${RESTRICTED_USER} deleted attached sessionreference ${namespace}/attached-c`,
    );
    expect(recorded).toContain('of sandbox shared (worktree wt-3)');
    expect((await auditAnnotations('tombstone-b')).map((a) => a[key]).filter((v) => v)).toEqual([]);
  });
});

describe('a sandbox claim’s binding by the operator’s identity', () => {
  // A real pool to own the sandbox: an owner reference to none would be garbage-collected at once.
  const poolOwner = async () => {
    const pool = {
      apiVersion: API_VERSION,
      kind: 'SandboxWarmPool',
      metadata: { name: 'pool', namespace },
      spec: { templateRef: { name: 'none' }, replicas: 0 },
    };
    const created = JSON.parse(
      await kubectlOk(['create', '-f', '-', '-o', 'json'], { input: JSON.stringify(pool) }),
    ) as { metadata: { uid: string } };
    return {
      apiVersion: API_VERSION,
      kind: 'SandboxWarmPool',
      name: 'pool',
      uid: created.metadata.uid,
      controller: true,
    };
  };
  const jsonPatch = (name: string, ops: object[]) =>
    asOperator(['patch', 'sandbox', name, '--type=json', '-p', JSON.stringify(ops)]);
  const poolSandbox = async (name: string) => {
    const manifest = sandboxManifest(namespace, name);
    const body = {
      ...manifest,
      metadata: {
        ...manifest.metadata,
        labels: { [LABELS.warmPool]: 'pool' },
        ownerReferences: [await poolOwner()],
      },
    };
    // As the operator: only it may set the warm-pool label (guard protection).
    const created = await kubectl(['create', '-f', '-'], { restricted: true, input: JSON.stringify(body) });
    expect(created.exitCode, created.stderr).toBe(0);
  };

  it('labels a pool sandbox with its claim and removes the pool’s owner reference, nothing else', async () => {
    await poolSandbox('bound');
    const label = `/metadata/labels/${LABELS.sandboxClaim.replace('/', '~1')}`;
    const bound = await jsonPatch('bound', [
      { op: 'add', path: label, value: 'claim-1' },
      { op: 'remove', path: '/metadata/ownerReferences/0' },
    ]);
    expect(bound.exitCode, bound.stderr).toBe(0);
    const relabelled = await jsonPatch('bound', [{ op: 'replace', path: label, value: 'claim-2' }]);
    expect(relabelled.stderr).toContain('the operator changes only a Sandbox’s finalizer');
    const unlabelled = await jsonPatch('bound', [{ op: 'remove', path: label }]);
    expect(unlabelled.stderr).toContain('the operator changes only a Sandbox’s finalizer');
    const pooled = await jsonPatch('bound', [
      { op: 'replace', path: `/metadata/labels/${LABELS.warmPool.replace('/', '~1')}`, value: 'other' },
    ]);
    expect(pooled.stderr).toContain('the operator changes only a Sandbox’s finalizer');
  });

  it('creates a claim’s Sandbox and its reference, labelled with the claim, and deletes that Sandbox', async () => {
    const manifest = sandboxManifest(namespace, 'cold');
    const unlabelled = await kubectl(['create', '-f', '-'], {
      restricted: true,
      input: JSON.stringify(manifest),
    });
    expect(unlabelled.stderr).toContain(
      'the operator creates only a warm pool’s or a sandbox claim’s Sandboxes',
    );
    const labelled = {
      ...manifest,
      metadata: { ...manifest.metadata, labels: { [LABELS.sandboxClaim]: 'claim-3' } },
    };
    const created = await kubectl(['create', '-f', '-'], {
      restricted: true,
      input: JSON.stringify(labelled),
    });
    expect(created.exitCode, created.stderr).toBe(0);
    const reference = (state: string) => ({
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: {
        name: `claimed-${state.toLowerCase()}`,
        namespace,
        labels: { [LABELS.sandboxClaim]: 'claim-3' },
      },
      spec: { sandbox: 'cold', session: 'workspace_3', route: 'r', role: 'Root', state },
    });
    const attached = await kubectl(['create', '-f', '-'], {
      restricted: true,
      input: JSON.stringify(reference('Attached')),
    });
    expect(attached.exitCode, attached.stderr).toBe(0);
    const deleted = await asOperator(['delete', 'sandbox', 'cold', '--wait=false']);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
  });
});

describe('the per-namespace opt-in (managedNamespaceLabel)', () => {
  const LABEL = 'sandbox.agents.dev/managed';
  const params = () => kubeConfig().makeApiClient(CoreV1Api);
  const setLabelParam = (value: string | undefined) =>
    params().patchNamespacedConfigMap({
      name: ADMISSION_PARAMS,
      namespace: DEFAULT_NAMESPACE,
      body: [{ op: value === undefined ? 'remove' : 'add', path: '/data/managedNamespaceLabel', value }],
    });
  let serial = 0;
  const recordEvent = () =>
    kubectl(['create', '-f', '-'], {
      restricted: true,
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `opt-in.${++serial}`, namespace },
        involvedObject: { kind: 'Sandbox', apiVersion: API_VERSION, name: 'kept', namespace },
        reason: 'Test',
        message: 'written as the operator',
        type: 'Normal',
      }),
    });

  it('refuses every write by the operator’s identity in a namespace without the label, and allows it with', async () => {
    const before = (
      await params().readNamespacedConfigMap({ name: ADMISSION_PARAMS, namespace: DEFAULT_NAMESPACE })
    ).data?.['managedNamespaceLabel'];
    await setLabelParam(`${LABEL}=true`);
    try {
      const refused = await eventually('the opt-in applies', async () => {
        const result = await recordEvent();
        return result.exitCode !== 0 ? result.stderr : pending(result.stdout);
      });
      expect(refused).toContain(`the sandbox operator acts only in namespaces labelled ${LABEL}=true`);
      const patched = await asOperator([
        'patch',
        'sandbox',
        'kept',
        '--type=merge',
        '-p',
        JSON.stringify({ metadata: { finalizers: [EXCLUSIVITY_FINALIZER] } }),
      ]);
      expect(patched.stderr).toContain('the sandbox operator acts only in namespaces labelled');
      await kubectlOk(['label', 'namespace', namespace, `${LABEL}=true`]);
      const allowed = await recordEvent();
      expect(allowed.exitCode, allowed.stderr).toBe(0);
    } finally {
      await setLabelParam(before);
      await kubectlOk(['label', 'namespace', namespace, `${LABEL}-`]);
    }
  });
});
