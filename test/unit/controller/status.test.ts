import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS, type Sandbox } from '../../../operator/api/index.ts';
import { setCondition } from '../../../operator/controller/conditions.ts';
import { drainPlan, type PodDrain } from '../../../operator/controller/disruption.ts';
import {
  changedStatusFields,
  decisionOf,
  sandboxStatus,
  statusPatchOps,
} from '../../../operator/controller/status.ts';
import type { PodSummary } from '../../../operator/controller/cache/pod-summary.ts';
import { buildReferenceIndex } from '../../../operator/exclusivity/index.ts';
import { pod as podOf, sandbox as sandboxBuilder } from '../builders.ts';
import { attached, ownReferences } from '../fixtures.ts';

const now = new Date('2026-11-30T12:00:00Z');

function sandbox(overrides: Partial<Sandbox['metadata']> = {}, status?: Sandbox['status']): Sandbox {
  return sandboxBuilder('sbx')
    .withMetadata({ generation: 3, ...overrides })
    .withSpec({ replicas: 2, podTemplate: { spec: { containers: [{ name: 'a', image: 'b' }] } } })
    .withStatus(status)
    .build();
}

const pod = (ordinal: number, ready: boolean): PodSummary => podOf('sbx', ordinal, { ready });
const born = { state: 'NotRequired' as const, marker: true };
const index = buildReferenceIndex([attached('a', 'wt-1'), attached('b', 'wt-2')], INDEX_LIMITS);

describe('sandboxStatus', () => {
  it('is Running with Ready=True when every pod is ready, and counts references and foreign ones', () => {
    const status = sandboxStatus({
      sandbox: sandbox(),
      index,
      pods: [pod(0, true), pod(1, true)],
      reconciliation: born,
      decision: undefined,
      unreferencedSince: undefined,
      erasedFor: undefined,
      now,
    });
    expect(status).toMatchObject({
      phase: 'Running',
      observedGeneration: 3,
      pods: { total: 2, ready: 2 },
      references: { attached: 2, detached: 0, foreign: 1 },
    });
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      observedGeneration: 3,
    });
  });

  it('is Blocked with DeletionBlocked naming the blockers when deleting and not exclusive', () => {
    const decision = decisionOf(
      {
        verdict: 'Foreign',
        evidence: 'Index',
        blockingReferences: ['b'],
        blockingCount: 1,
        reason: '1 reference foreign',
      },
      now,
    );
    const status = sandboxStatus({
      sandbox: sandbox({ deletionTimestamp: '2026-11-30T11:59:00Z' }),
      index,
      pods: [pod(0, true)],
      reconciliation: born,
      decision,
      unreferencedSince: undefined,
      erasedFor: undefined,
      now,
    });
    expect(status.phase).toBe('Blocked');
    expect(status.conditions?.find((c) => c.type === 'DeletionBlocked')).toMatchObject({
      status: 'True',
      reason: 'Foreign',
      message: expect.stringContaining('blocking: b'),
    });
  });

  it('reports an overflowed index as CapacityExceeded', () => {
    const overflowed = buildReferenceIndex(ownReferences(513), INDEX_LIMITS);
    const status = sandboxStatus({
      sandbox: sandbox(),
      index: overflowed,
      pods: [],
      reconciliation: born,
      decision: undefined,
      unreferencedSince: undefined,
      erasedFor: undefined,
      now,
    });
    expect(status.capacity).toMatchObject({ overflowed: true, limit: 'References', observed: 513, max: 512 });
    expect(status.conditions?.find((c) => c.type === 'CapacityExceeded')).toMatchObject({
      status: 'True',
      reason: 'ReferencesExceeded',
    });
  });
});

describe('the DisruptionBlocked and Disrupting conditions', () => {
  const conditionsWith = (drain: Parameters<typeof sandboxStatus>[0]['drain']) =>
    sandboxStatus({
      sandbox: sandbox(),
      index,
      pods: [pod(0, true), pod(1, true)],
      reconciliation: born,
      decision: undefined,
      unreferencedSince: undefined,
      erasedFor: undefined,
      ...(drain === undefined ? {} : { drain }),
      now,
    }).conditions;
  const blockedBy = (drains: readonly PodDrain[]) =>
    conditionsWith({
      plan: drainPlan({ policy: 'Block', holdSeconds: 0, drains, since: undefined, runningTurns: 0, now }),
      holdSeconds: 0,
    });
  const condition = (conditions: ReturnType<typeof conditionsWith>, type: string) =>
    conditions?.find((c) => c.type === type);

  it('are False while no pod is on a node being drained, and when the operator cannot watch Nodes', () => {
    for (const conditions of [blockedBy([]), conditionsWith(undefined)]) {
      expect(condition(conditions, 'DisruptionBlocked')).toMatchObject({
        status: 'False',
        reason: 'NoDrain',
      });
      expect(condition(conditions, 'Disrupting')).toMatchObject({ status: 'False', reason: 'NoDrain' });
    }
  });

  it('under Block: DisruptionBlocked True naming each node, what drains it and each pod the guard keeps', () => {
    const one = blockedBy([{ node: 'n1', cause: 'Cordoned', pod: 'sbx-0', uid: 'u0' }]);
    expect(condition(one, 'DisruptionBlocked')).toMatchObject({
      status: 'True',
      reason: 'NodeDraining',
      message: expect.stringMatching(
        /^node n1 \(Cordoned\) being drained; the eviction guard refuses to evict pod sbx-0 /,
      ),
    });
    expect(condition(one, 'Disrupting')).toMatchObject({ status: 'False', reason: 'PolicyBlock' });
    const two = condition(
      blockedBy([
        { node: 'n1', cause: 'Karpenter', pod: 'sbx-0', uid: 'u0' },
        { node: 'n2', cause: 'ClusterAutoscaler', pod: 'sbx-1', uid: 'u1' },
      ]),
      'DisruptionBlocked',
    );
    expect(two?.message).toContain('nodes n1 (Karpenter), n2 (ClusterAutoscaler) being drained');
    expect(two?.message).toContain('pods sbx-0, sbx-1');
  });

  it('under Block because the template pins the drained node: says so', () => {
    const conditions = conditionsWith({
      plan: {
        kind: 'Blocked',
        drains: [{ node: 'n1', cause: 'Cordoned', pod: 'sbx-0', uid: 'u0' }],
        pinnedTo: 'n1',
      },
      holdSeconds: 300,
    });
    expect(condition(conditions, 'DisruptionBlocked')?.message).toContain(
      'refuses to evict pod sbx-0 (the template pins nodeName n1, so a replacement could not move), so the drain waits',
    );
  });

  it('remembers a drain that ended (DrainEnded) while the moved pod’s name is kept free, then forgets it', () => {
    const after = (disrupting: object) =>
      condition(
        sandboxStatus({
          sandbox: sandboxBuilder('sbx')
            .withStatus({ conditions: [disrupting as never] })
            .build(),
          index,
          pods: [pod(0, true), pod(1, true)],
          reconciliation: born,
          decision: undefined,
          unreferencedSince: undefined,
          erasedFor: undefined,
          now,
        }).conditions,
        'Disrupting',
      );
    const was = (status: string, reason: string, agoMs: number) => ({
      type: 'Disrupting',
      status,
      reason,
      message: '',
      lastTransitionTime: new Date(now.getTime() - agoMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
    expect(after(was('True', 'NodeDraining', 60_000))).toMatchObject({
      status: 'False',
      reason: 'DrainEnded',
    });
    expect(after(was('False', 'DrainEnded', 5_000))).toMatchObject({ status: 'False', reason: 'DrainEnded' });
    expect(after(was('False', 'DrainEnded', 20_000))).toMatchObject({ status: 'False', reason: 'NoDrain' });
    expect(after(was('False', 'NoDrain', 1_000))).toMatchObject({ status: 'False', reason: 'NoDrain' });
  });

  it('under Reschedule: Disrupting True with the deadline, DisruptionBlocked False (Rescheduling)', () => {
    const since = new Date(now.getTime() - 60_000);
    const conditions = conditionsWith({
      plan: drainPlan({
        policy: 'Reschedule',
        holdSeconds: 300,
        drains: [{ node: 'n1', cause: 'Cordoned', pod: 'sbx-0', uid: 'u0' }],
        since,
        runningTurns: 2,
        now,
      }),
      holdSeconds: 300,
    });
    const deadline = new Date(since.getTime() + 300_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    expect(condition(conditions, 'Disrupting')).toMatchObject({
      status: 'True',
      reason: 'NodeDraining',
      message:
        'node n1 (Cordoned) being drained; pod sbx-0 moves to another node once no attached session has a ' +
        `turn Running, at the latest at ${deadline} (disruption policy Reschedule)`,
    });
    expect(condition(conditions, 'DisruptionBlocked')).toMatchObject({
      status: 'False',
      reason: 'Rescheduling',
    });
  });
});

describe('setCondition', () => {
  it('keeps lastTransitionTime while the status is unchanged and moves it when the status changes', () => {
    const first = setCondition(
      [],
      { type: 'Ready', status: 'False', reason: 'PodsNotReady', message: '0/1' },
      new Date('2026-01-01T00:00:00Z'),
      1,
    );
    const same = setCondition(
      first,
      { type: 'Ready', status: 'False', reason: 'PodsNotReady', message: '0/2' },
      new Date('2026-01-02T00:00:00Z'),
      2,
    );
    expect(same[0]).toMatchObject({
      lastTransitionTime: '2026-01-01T00:00:00Z',
      message: '0/2',
      observedGeneration: 2,
    });
    const flipped = setCondition(
      same,
      { type: 'Ready', status: 'True', reason: 'PodsReady', message: '1/1' },
      new Date('2026-01-03T00:00:00Z'),
      2,
    );
    expect(flipped[0]?.lastTransitionTime).toBe('2026-01-03T00:00:00Z');
  });
});

describe('changedStatusFields', () => {
  it('is empty when nothing changed, whatever the key order', () => {
    expect(
      changedStatusFields(
        { references: { detached: 0, attached: 1, foreign: 0 } },
        { references: { attached: 1, detached: 0, foreign: 0 } },
      ),
    ).toBeUndefined();
  });

  it('gives each changed top-level field whole, and null for one that disappeared', () => {
    const ready = {
      type: 'Ready',
      status: 'True',
      reason: 'PodsReady',
      message: '',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    } as const;
    const changed = changedStatusFields(
      {
        capacity: { overflowed: true, limit: 'References', observed: 600, max: 512 },
        unreferencedSince: '2026-01-01T00:00:00Z',
        conditions: [],
        references: { attached: 1, detached: 0, foreign: 0 },
      },
      {
        capacity: { overflowed: false },
        conditions: [ready],
        references: { attached: 1, detached: 0, foreign: 0 },
      },
    );
    expect(changed).toEqual({
      capacity: { overflowed: false },
      unreferencedSince: null,
      conditions: [ready],
    });
  });
});

describe('statusPatchOps', () => {
  it('tests the uid first, then sets or removes each changed field', () => {
    expect(
      statusPatchOps('uid-1', { phase: 'Running' }, { phase: 'Deleting', unreferencedSince: null }),
    ).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'add', path: '/status/phase', value: 'Deleting' },
      { op: 'remove', path: '/status/unreferencedSince' },
    ]);
  });

  it('adds the whole status when there was none', () => {
    expect(statusPatchOps('uid-1', undefined, { phase: 'Pending' })).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'add', path: '/status', value: { phase: 'Pending' } },
    ]);
  });

  it('tests the resourceVersion the change was computed from, when it must land on that version only', () => {
    expect(statusPatchOps('uid-1', { phase: 'Terminating' }, { phase: 'Blocked' }, '42')).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/status/phase', value: 'Blocked' },
    ]);
  });
});

describe('the Misconfigured condition', () => {
  const refusal = {
    reason: 'RBACForbidden',
    refused:
      'Create pod ns/sbx-0 failed with HTTP 403: pods "sbx-0" is forbidden: User "dev" cannot create …',
    fix: 'grant dev "create" on pods in namespace ns',
  };
  const statusOf = (
    subject: Sandbox,
    misconfiguration?: Parameters<typeof sandboxStatus>[0]['misconfiguration'],
  ) =>
    sandboxStatus({
      sandbox: subject,
      index,
      pods: [],
      reconciliation: born,
      decision: undefined,
      unreferencedSince: undefined,
      erasedFor: undefined,
      misconfiguration,
      now,
    });
  const misconfigured = (status: ReturnType<typeof sandboxStatus>) =>
    status.conditions?.find((c) => c.type === 'Misconfigured');

  it('is True with the refusal and its fix while the operator knows of one', () => {
    expect(misconfigured(statusOf(sandbox(), refusal))).toMatchObject({
      status: 'True',
      reason: 'RBACForbidden',
      message: `${refusal.refused}; fix: ${refusal.fix}`,
    });
  });

  it('keeps the fix when a long refusal is clipped', () => {
    const message =
      misconfigured(statusOf(sandbox(), { ...refusal, refused: 'x'.repeat(5000) }))?.message ?? '';
    expect(message.length).toBeLessThanOrEqual(1024);
    expect(message.endsWith(`…; fix: ${refusal.fix}`)).toBe(true);
  });

  it('turns False once resolved, or once a restarted operator has not met it; a healthy sandbox has none', () => {
    const marked = sandbox({}, { conditions: statusOf(sandbox(), refusal).conditions ?? [] });
    expect(misconfigured(statusOf(marked, 'Resolved'))).toMatchObject({
      status: 'False',
      reason: 'Resolved',
    });
    expect(misconfigured(statusOf(marked, undefined))).toMatchObject({ status: 'False', reason: 'Resolved' });
    expect(misconfigured(statusOf(sandbox(), undefined))).toBeUndefined();
    expect(misconfigured(statusOf(sandbox(), 'Resolved'))).toBeUndefined();
  });
});

describe('a suspended sandbox', () => {
  const statusOf = (
    suspension: Parameters<typeof sandboxStatus>[0]['suspension'],
    pods: PodSummary[],
    overrides: Partial<Sandbox['metadata']> = {},
    before?: Sandbox['status'],
  ) =>
    sandboxStatus({
      sandbox: sandbox(overrides, before),
      index,
      pods,
      reconciliation: born,
      decision: undefined,
      unreferencedSince: undefined,
      erasedFor: undefined,
      suspension,
      now,
    });
  const condition = (status: ReturnType<typeof sandboxStatus>, type: string) =>
    status.conditions?.find((c) => c.type === type);
  const requested = { kind: 'Suspended', reason: 'Requested', idleSince: undefined } as const;

  it('is Suspended with Suspended=True and Ready=False, Suspending (Reconciling) until its pods are gone', () => {
    const stopping = statusOf(requested, [pod(0, true)]);
    expect(stopping.phase).toBe('Suspended');
    expect(condition(stopping, 'Suspended')).toMatchObject({ status: 'True', reason: 'Requested' });
    expect(condition(stopping, 'Ready')).toMatchObject({ status: 'False', reason: 'Suspending' });
    expect(condition(stopping, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Suspending' });
    const stopped = statusOf(requested, []);
    expect(condition(stopped, 'Ready')).toMatchObject({ status: 'False', reason: 'Suspended' });
    expect(condition(stopped, 'Reconciling')).toMatchObject({ status: 'False', reason: 'Suspended' });
    expect(condition(stopped, 'Stalled')).toMatchObject({ status: 'False' });
  });

  it('records idleSince as judged, and Suspended=False while it runs', () => {
    const running = statusOf({ kind: 'Running', idleSince: '2026-11-30T11:00:00Z', idleInMs: 5 }, [
      pod(0, true),
      pod(1, true),
    ]);
    expect(running.phase).toBe('Running');
    expect(running.idleSince).toBe('2026-11-30T11:00:00Z');
    expect(condition(running, 'Suspended')).toMatchObject({ status: 'False', reason: 'Running' });
    expect(statusOf({ kind: 'Running', idleSince: undefined, idleInMs: undefined }, []).idleSince).toBe(
      undefined,
    );
  });

  it('is Terminating or Blocked while being deleted, its Suspended condition and idleSince kept as they were', () => {
    const before = statusOf(requested, []);
    const deleting = sandboxStatus({
      sandbox: sandbox(
        { deletionTimestamp: '2026-11-30T11:59:00Z' },
        { ...before, idleSince: '2026-11-30T10:00:00Z' },
      ),
      index,
      pods: [],
      reconciliation: born,
      decision: undefined,
      unreferencedSince: undefined,
      erasedFor: undefined,
      now,
    });
    expect(deleting.phase).toBe('Terminating');
    expect(deleting.idleSince).toBe('2026-11-30T10:00:00Z');
    expect(condition(deleting, 'Suspended')).toEqual(condition(before, 'Suspended'));
  });
});
