import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  reconcileSandboxClaim,
  BINDING_RETRY_MS,
  MISSING_RETRY_MS,
  type ClaimReconcilerContext,
} from '../../../../operator/controller/binding/reconciler.ts';
import type { BindingCacheReader } from '../../../../operator/controller/binding/cache.ts';
import type { ClaimRecord } from '../../../../operator/controller/binding/records.ts';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import { Reservations } from '../../../../operator/controller/binding/reservations.ts';
import { FakeCluster } from './fake-ports.ts';
import { claimRecord, POOL, poolSandbox } from './fixtures.ts';

const FINALIZER = 'sandbox.agents.dev/sandbox-claim';
const log = pino({ level: 'silent' });

function setup(
  claim: ClaimRecord = claimRecord(),
  poolNames: string[] = ['python-pool-a', 'python-pool-b'],
  { poolCached = true }: { poolCached?: boolean } = {},
) {
  const cluster = new FakeCluster();
  for (const name of poolNames) cluster.sandboxes.set(name, poolSandbox(name));
  cluster.pools.set(POOL.name, { uid: POOL.uid, templateName: 'python-agent' });
  cluster.templates.set('python-agent', {
    generation: 2,
    spec: { podTemplate: { spec: { containers: [] } } },
  });
  const bound: string[] = [];
  const ready: [string, string, number][] = [];
  let current = claim;
  const cache: BindingCacheReader = {
    claim: () => current,
    claimKeys: () => ['team-a/claim-1'],
    sandbox: (_ns, name) => cluster.sandboxes.get(name),
    poolSandboxes: () => [...cluster.sandboxes.values()].filter((s) => s.pool === POOL.name),
    // The pool watch's view: what the cluster holds, unless the test says the watch has not shown it yet.
    pool: (namespace, name) => {
      const pool = poolCached ? cluster.pools.get(name) : undefined;
      return (
        pool && { namespace, name, uid: pool.uid, templateName: pool.templateName, deleting: !!pool.deleting }
      );
    },
    firstSeen: () => Date.parse('2026-12-03T07:00:00Z'),
  };
  const ctx: ClaimReconcilerContext = {
    cache,
    ports: cluster.ports(),
    now: () => new Date('2026-12-03T07:00:00.250Z'),
    suffix: () => 'cold1',
    recorder: { onBound: (t) => bound.push(t), onReady: (t, p, s) => ready.push([t, p, s]) },
    written: new Map(),
    reservations: new Reservations(),
  };
  const turn = () => reconcileSandboxClaim(ctx, 'team-a/claim-1', log);
  const setClaim = (next: ClaimRecord) => (current = next);
  return { cluster, bound, ready, turn, setClaim };
}

/** A reference of another worktree, made by someone else under the name the claim would use on `sandbox`. */
function squatReference(cluster: FakeCluster, sandbox: string) {
  const name = sessionReferenceName(sandbox, 'workspace_1');
  const squat = {
    metadata: {},
    spec: { sandbox, session: 'workspace_1', worktree: 'wt-other', role: 'Root', route: 'x' },
  };
  cluster.references.set(name, { uid: 'squat', resourceVersion: '1', raw: squat });
  return { name, squat };
}

describe('the SandboxClaim reconciler', () => {
  it('binds a ready pool sandbox in the design’s order: finalizer, reference, patch (the fence), status', async () => {
    const { cluster, bound, ready, turn } = setup(claimRecord(), ['python-pool-a']);
    expect(await turn()).toEqual({ kind: 'AwaitChange' });
    // No fence read: the binding patch, sent after the reference, tests both fences (the fake refuses one
    // that does not).
    expect(cluster.log).toEqual([
      'claim:patch',
      'reference:create:python-pool-a',
      'sandbox:bind:python-pool-a',
      'claim:status',
    ]);
    expect(cluster.claimFinalizers).toEqual([FINALIZER]);
    expect(cluster.sandboxes.get('python-pool-a')).toMatchObject({ claim: 'claim-1', owners: [] });
    const status = cluster.statuses.at(-1);
    expect(status).toMatchObject({
      sandbox: 'python-pool-a',
      reference: sessionReferenceName('python-pool-a', 'workspace_1'),
      launchType: 'Warm',
      boundAt: '2026-12-03T07:00:00Z',
    });
    expect(status?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ['Bound', 'True'],
      ['Ready', 'True'],
    ]);
    expect(bound).toEqual(['Warm']);
    expect(ready).toEqual([['Warm', POOL.name, 0.25]]);
    expect(cluster.events.map((e) => e.reason)).toEqual(['Bound']);
  });

  it('a pool sandbox another claim won since it was read is left with that claim, and another bound', async () => {
    const { cluster, turn } = setup();
    const taken: string[] = [];
    cluster.beforeBind = (name) => {
      if (taken.length > 0) return;
      taken.push(name);
      const sandbox = cluster.sandboxes.get(name);
      if (sandbox)
        cluster.sandboxes.set(name, { ...sandbox, claim: 'claim-2', resourceVersion: cluster.next() });
    };
    await turn();
    const other = ['python-pool-a', 'python-pool-b'].find((n) => n !== taken[0]) ?? '';
    expect(cluster.log).toEqual([
      'claim:patch',
      `reference:create:${taken[0]}`,
      `reference:delete:${taken[0]}`,
      `reference:create:${other}`,
      `sandbox:bind:${other}`,
      'claim:status',
    ]);
    expect(cluster.statuses.at(-1)).toMatchObject({ sandbox: other, launchType: 'Warm' });
    expect(cluster.sandboxes.get(taken[0] ?? '')?.claim).toBe('claim-2');
    expect(cluster.references.has(sessionReferenceName(taken[0] ?? '', 'workspace_1'))).toBe(false);
  });

  it('a pool sandbox only written since it was read (its status) is still bound: no version is tested', async () => {
    const { cluster, turn } = setup(claimRecord(), ['python-pool-a']);
    cluster.beforeBind = (name) => {
      const sandbox = cluster.sandboxes.get(name);
      if (sandbox) cluster.sandboxes.set(name, { ...sandbox, resourceVersion: cluster.next() });
    };
    await turn();
    expect(cluster.statuses.at(-1)).toMatchObject({ sandbox: 'python-pool-a', launchType: 'Warm' });
    expect(cluster.bindings).toHaveLength(1);
    expect(cluster.bindings.flat().some((op) => op.path === '/metadata/resourceVersion')).toBe(false);
  });

  it('a reference a host re-attached since this turn made it is not withdrawn when the patch loses', async () => {
    const { cluster, turn } = setup(claimRecord(), ['python-pool-a']);
    const name = sessionReferenceName('python-pool-a', 'workspace_1');
    cluster.beforeBind = (sandbox) => {
      const stored = cluster.sandboxes.get(sandbox);
      if (stored) cluster.sandboxes.set(sandbox, { ...stored, claim: 'claim-2' });
      const reference = cluster.references.get(name);
      if (reference) cluster.references.set(name, { ...reference, resourceVersion: cluster.next() });
    };
    await turn();
    expect(cluster.references.has(name)).toBe(true);
    expect(cluster.statuses.at(-1)).toMatchObject({ launchType: 'Cold' });
  });

  it('an empty pool falls back to a cold sandbox from the pool’s template, and says so', async () => {
    const { cluster, bound, ready, turn } = setup(claimRecord(), []);
    cluster.sandboxes.set('not-ready', poolSandbox('not-ready', { ready: { status: 'False' } }));
    await turn();
    expect(cluster.log).toEqual([
      'claim:patch',
      'sandbox:create:claim-1-cold1',
      'reference:create:claim-1-cold1',
      'claim:status',
    ]);
    expect(cluster.sandboxes.get('claim-1-cold1')).toMatchObject({
      claim: 'claim-1',
      template: 'python-agent',
      owners: [],
    });
    expect(cluster.statuses.at(-1)).toMatchObject({ launchType: 'Cold', sandbox: 'claim-1-cold1' });
    expect(cluster.statuses.at(-1)?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'SandboxNotReady',
    });
    expect(bound).toEqual(['Cold']);
    expect(ready).toEqual([]);
  });

  it('a missing pool is a condition naming the field and one Warning Event, looked at again later', async () => {
    const { cluster, turn, setClaim } = setup(claimRecord({ finalizers: [FINALIZER] }));
    cluster.pools.clear();
    expect(await turn()).toEqual({ kind: 'RequeueAfter', ms: MISSING_RETRY_MS });
    const status = cluster.statuses.at(-1);
    expect(status?.conditions?.[0]).toMatchObject({
      type: 'Bound',
      status: 'False',
      reason: 'WarmPoolNotFound',
      message: 'spec.warmPoolRef.name: SandboxWarmPool team-a/python-pool does not exist',
    });
    expect(cluster.events).toEqual([
      { type: 'Warning', reason: 'WarmPoolNotFound', message: status?.conditions?.[0]?.message },
    ]);
    setClaim(claimRecord({ finalizers: [FINALIZER], status: status ?? {} }));
    expect(await turn()).toEqual({ kind: 'RequeueAfter', ms: MISSING_RETRY_MS });
    expect(cluster.events).toHaveLength(1);
    expect(cluster.statuses).toHaveLength(1);
  });

  it('a pool its cache has not shown yet is read live once, and the binding goes on', async () => {
    const { cluster, turn } = setup(claimRecord(), ['python-pool-a'], { poolCached: false });
    expect(await turn()).toEqual({ kind: 'AwaitChange' });
    expect(cluster.log).toEqual([
      'claim:patch',
      'pool:read:python-pool',
      'reference:create:python-pool-a',
      'sandbox:bind:python-pool-a',
      'claim:status',
    ]);
  });

  it('a pool being deleted binds nothing: a condition naming the field, looked at again later', async () => {
    const { cluster, turn } = setup(claimRecord({ finalizers: [FINALIZER] }), ['python-pool-a']);
    cluster.pools.set(POOL.name, { uid: POOL.uid, templateName: 'python-agent', deleting: true });
    expect(await turn()).toEqual({ kind: 'RequeueAfter', ms: MISSING_RETRY_MS });
    expect(cluster.log).toEqual(['claim:status']);
    expect(cluster.sandboxes.get('python-pool-a')?.claim).toBeUndefined();
    expect(cluster.statuses.at(-1)?.conditions?.[0]).toMatchObject({
      reason: 'WarmPoolNotFound',
      message: 'spec.warmPoolRef.name: SandboxWarmPool team-a/python-pool is being deleted',
    });
  });

  it('a templateRef claim whose template is missing names spec.templateRef.name', async () => {
    const { cluster, turn } = setup(
      claimRecord({
        finalizers: [FINALIZER],
        spec: { templateRef: { name: 'gone' }, session: 's', route: 'r', role: 'Root' },
      }),
    );
    await turn();
    expect(cluster.statuses.at(-1)?.conditions?.[0]).toMatchObject({
      reason: 'TemplateNotFound',
      message: 'spec.templateRef.name: SandboxTemplate team-a/gone does not exist',
    });
  });

  it('a claim naming both a pool and a template, or neither, is refused', async () => {
    const both = setup(
      claimRecord({
        finalizers: [FINALIZER],
        spec: {
          warmPoolRef: { name: 'p' },
          templateRef: { name: 't' },
          session: 's',
          route: 'r',
          role: 'Root',
        },
      }),
    );
    await both.turn();
    expect(both.cluster.statuses.at(-1)?.conditions?.[0]?.reason).toBe('SpecInvalid');
    expect(both.cluster.log).toEqual(['claim:status']);
  });

  it('a reference of another worktree under a candidate’s name: nothing is overwritten, another is bound', async () => {
    const { cluster, turn } = setup(claimRecord({ finalizers: [FINALIZER] }), ['python-pool-a']);
    const { name, squat } = squatReference(cluster, 'python-pool-a');
    await turn();
    expect(cluster.sandboxes.get('python-pool-a')?.claim).toBeUndefined();
    expect(cluster.statuses.at(-1)).toMatchObject({ launchType: 'Cold', sandbox: 'claim-1-cold1' });
    expect(cluster.references.get(name)).toMatchObject({ uid: 'squat', raw: squat });
  });

  it('a reference of another worktree under the name of a sandbox the claim holds is a conflict naming the field', async () => {
    const { cluster, turn } = setup(claimRecord({ finalizers: [FINALIZER] }), []);
    cluster.sandboxes.set('python-pool-a', poolSandbox('python-pool-a', { claim: 'claim-1', owners: [] }));
    const { name } = squatReference(cluster, 'python-pool-a');
    await turn();
    expect(cluster.statuses.at(-1)?.conditions?.[0]).toMatchObject({
      reason: 'ReferenceConflict',
      message: expect.stringContaining('spec.worktree "wt-other", not "wt-1"') as unknown,
    });
    expect(cluster.references.get(name)?.uid).toBe('squat');
  });

  it('the same session’s reference under the name (a turn that stopped after it) is taken as written', async () => {
    const { cluster, turn } = setup(claimRecord({ finalizers: [FINALIZER] }), ['python-pool-a']);
    cluster.sandboxes.set('python-pool-a', poolSandbox('python-pool-a', { claim: 'claim-1', owners: [] }));
    const name = sessionReferenceName('python-pool-a', 'workspace_1');
    const mine = {
      metadata: { labels: { [FINALIZER]: 'claim-1' } },
      spec: { sandbox: 'python-pool-a', session: 'workspace_1', worktree: 'wt-1', role: 'Root', route: 'r' },
    };
    cluster.references.set(name, { uid: 'mine', resourceVersion: '1', raw: mine });
    await turn();
    expect(cluster.log).toEqual(['claim:status']);
    expect(cluster.statuses.at(-1)).toMatchObject({
      sandbox: 'python-pool-a',
      launchType: 'Warm',
      reference: name,
    });
  });

  it('a pool sandbox being deleted when the patch lands: the reference is withdrawn and another bound', async () => {
    const { cluster, turn } = setup(claimRecord({ finalizers: [FINALIZER] }));
    let deleting = '';
    cluster.beforeBind = (name) => {
      const sandbox = cluster.sandboxes.get(name);
      if (deleting !== '' || sandbox === undefined) return;
      deleting = name;
      cluster.sandboxes.set(name, { ...sandbox, deleting: true });
    };
    await turn();
    const other = ['python-pool-a', 'python-pool-b'].find((n) => n !== deleting) ?? '';
    expect(cluster.log).toEqual([
      `reference:create:${deleting}`,
      `reference:delete:${deleting}`,
      `reference:create:${other}`,
      `sandbox:bind:${other}`,
      'claim:status',
    ]);
    expect(cluster.statuses.at(-1)).toMatchObject({ sandbox: other });
    expect(cluster.sandboxes.get(deleting)?.claim).toBeUndefined();
    expect(cluster.references.has(sessionReferenceName(deleting, 'workspace_1'))).toBe(false);
  });

  it('a cleanup fence raised before the patch lands counts as deleting: withdrawn, and the claim goes cold', async () => {
    const { cluster, turn } = setup(claimRecord({ finalizers: [FINALIZER] }), ['python-pool-a']);
    cluster.beforeBind = (name) => {
      const sandbox = cluster.sandboxes.get(name);
      if (sandbox) cluster.sandboxes.set(name, { ...sandbox, fenced: true });
    };
    await turn();
    expect(cluster.log).toContain('reference:delete:python-pool-a');
    expect(cluster.sandboxes.get('python-pool-a')?.claim).toBeUndefined();
    expect(cluster.statuses.at(-1)).toMatchObject({ launchType: 'Cold' });
  });

  it('a sandbox the claim holds, found being deleted at the fence read: the reference is withdrawn', async () => {
    const { cluster, turn } = setup(claimRecord({ finalizers: [FINALIZER] }), ['python-pool-b']);
    cluster.sandboxes.set('python-pool-a', poolSandbox('python-pool-a', { claim: 'claim-1', owners: [] }));
    cluster.fenceOf.set('python-pool-a', { metadata: { deletionTimestamp: '2026-12-03T07:00:00Z' } });
    await turn();
    expect(cluster.log).toEqual([
      'reference:create:python-pool-a',
      'reference:delete:python-pool-a',
      'reference:create:python-pool-b',
      'sandbox:bind:python-pool-b',
      'claim:status',
    ]);
    expect(cluster.statuses.at(-1)).toMatchObject({ sandbox: 'python-pool-b' });
  });

  it('a fence that cannot be read counts as deleting', async () => {
    const { cluster, turn } = setup(claimRecord({ finalizers: [FINALIZER] }), []);
    cluster.sandboxes.set('python-pool-a', poolSandbox('python-pool-a', { claim: 'claim-1', owners: [] }));
    cluster.fenceOf.set('python-pool-a', { metadata: { annotations: 'not a map' } });
    await turn();
    expect(cluster.log).toContain('reference:delete:python-pool-a');
    expect(cluster.statuses.at(-1)).toMatchObject({ launchType: 'Cold', sandbox: 'claim-1-cold1' });
  });

  it('a bound claim’s Ready follows its sandbox, and the latency is observed once it turns True', async () => {
    const { cluster, ready, turn, setClaim } = setup(claimRecord({ finalizers: [FINALIZER] }), []);
    await turn();
    const cold = cluster.statuses.at(-1) ?? {};
    setClaim(claimRecord({ finalizers: [FINALIZER], status: cold }));
    expect(await turn()).toEqual({ kind: 'AwaitChange' });
    expect(cluster.statuses).toHaveLength(1);
    const sandbox = cluster.sandboxes.get('claim-1-cold1');
    if (sandbox) cluster.sandboxes.set(sandbox.name, { ...sandbox, ready: { status: 'True' } });
    await turn();
    expect(cluster.statuses.at(-1)?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(ready).toEqual([['Cold', POOL.name, 0.25]]);
  });

  it('a deleted claim forgets its reference, deletes its sandbox, then drops only its finalizer', async () => {
    const { cluster, turn, setClaim } = setup(claimRecord(), ['python-pool-a']);
    await turn();
    setClaim(
      claimRecord({
        deleting: true,
        finalizers: ['other/x', FINALIZER],
        status: cluster.statuses.at(-1) ?? {},
      }),
    );
    cluster.log.length = 0;
    expect(await turn()).toEqual({ kind: 'AwaitChange' });
    expect(cluster.log).toEqual([
      'reference:delete:python-pool-a',
      'sandbox:delete:python-pool-a',
      'claim:patch',
    ]);
    expect(cluster.patches.at(-1)).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'claim-uid-1' },
      { op: 'test', path: '/metadata/finalizers', value: ['other/x', FINALIZER] },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
    setClaim(claimRecord({ deleting: true, finalizers: ['other/x'] }));
    cluster.log.length = 0;
    await turn();
    expect(cluster.log).toEqual([]);
  });

  it('a deleted claim whose reference delete did not happen (409) keeps its finalizer and releases again', async () => {
    const { cluster, turn, setClaim } = setup(claimRecord(), ['python-pool-a']);
    await turn();
    const deleting = claimRecord({
      deleting: true,
      finalizers: [FINALIZER],
      status: cluster.statuses.at(-1) ?? {},
    });
    setClaim(deleting);
    cluster.referenceDeletesToLose = 1;
    cluster.log.length = 0;
    expect(await turn()).toEqual({ kind: 'RequeueAfter', ms: BINDING_RETRY_MS });
    // The sandbox's deletion is the decision's (the reference still holds it); the claim stays to forget it.
    expect(cluster.log).toEqual(['sandbox:delete:python-pool-a']);
    cluster.log.length = 0;
    expect(await turn()).toEqual({ kind: 'AwaitChange' });
    expect(cluster.log).toEqual(['reference:delete:python-pool-a', 'claim:patch']);
    expect(cluster.references.size).toBe(0);
  });

  it('a claim whose finalizer this turn added is bound without listing for an earlier binding', async () => {
    const { cluster, turn } = setup(claimRecord(), ['python-pool-a']);
    await turn();
    expect(cluster.sandboxLists).toBe(0);
    const again = setup(claimRecord({ finalizers: [FINALIZER] }), ['python-pool-a']);
    await again.turn();
    expect(again.cluster.sandboxLists).toBe(1);
  });

  it('a turn on a cache that has not shown the binding yet neither binds again nor counts it again', async () => {
    const { cluster, bound, turn, setClaim } = setup(claimRecord(), ['python-pool-a', 'python-pool-b']);
    await turn();
    // The finalizer's event arrived, the status's not yet.
    setClaim(claimRecord({ finalizers: [FINALIZER] }));
    cluster.log.length = 0;
    expect(await turn()).toEqual({ kind: 'AwaitChange' });
    expect(cluster.log).toEqual([]);
    expect(bound).toEqual(['Warm']);
    expect(cluster.events).toHaveLength(1);
  });
});
