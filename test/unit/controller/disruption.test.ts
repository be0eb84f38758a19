import { describe, expect, it } from 'vitest';
import {
  disruptingMessage,
  disruptionPolicyOf,
  drainPlan,
  holdRemainingMs,
  movedMessage,
  NAME_FREE_MS,
  replacementWaitMs,
  type PodDrain,
} from '../../../operator/controller/disruption.ts';

const now = new Date('2026-12-02T10:00:00Z');
const drain: PodDrain = { node: 'n1', cause: 'Cordoned', pod: 'sbx-0', uid: 'u0' };
const plan = (over: Partial<Parameters<typeof drainPlan>[0]>) =>
  drainPlan({
    policy: 'Reschedule',
    holdSeconds: 300,
    drains: [drain],
    since: undefined,
    runningTurns: 0,
    now,
    ...over,
  });

describe('disruptionPolicyOf', () => {
  it('is what the spec asks for', () => {
    expect(disruptionPolicyOf({ disruption: { policy: 'Reschedule', holdSeconds: 300 } })).toBe('Reschedule');
    expect(disruptionPolicyOf({ disruption: { policy: 'Block', holdSeconds: 300 } })).toBe('Block');
  });

  it('defaults to Block while the workspace lives in the pod', () => {
    expect(disruptionPolicyOf({})).toBe('Block');
    expect(disruptionPolicyOf({ disruption: { holdSeconds: 10 } })).toBe('Block');
    expect(disruptionPolicyOf({ volumeClaimTemplates: [] })).toBe('Block');
  });

  it('defaults to Reschedule when the workspace lives on claims, and a spec that asks for Block is kept', () => {
    const volumeClaimTemplates = [
      {
        metadata: { name: 'workspace' },
        spec: { accessModes: ['ReadWriteOnce' as const], resources: { requests: { storage: '1Gi' } } },
      },
    ];
    expect(disruptionPolicyOf({ volumeClaimTemplates })).toBe('Reschedule');
    expect(disruptionPolicyOf({ volumeClaimTemplates, disruption: { holdSeconds: 10 } })).toBe('Reschedule');
    expect(
      disruptionPolicyOf({ volumeClaimTemplates, disruption: { policy: 'Block', holdSeconds: 10 } }),
    ).toBe('Block');
  });
});

describe('drainPlan', () => {
  it('is None without a pod on a node being drained, whatever the policy', () => {
    expect(plan({ drains: [] })).toEqual({ kind: 'None' });
    expect(plan({ drains: [], policy: 'Block', runningTurns: 3 })).toEqual({ kind: 'None' });
  });

  it('under Block never moves a pod', () => {
    expect(plan({ policy: 'Block' })).toEqual({ kind: 'Blocked', drains: [drain] });
    expect(plan({ policy: 'Block', since: new Date(0) })).toEqual({ kind: 'Blocked', drains: [drain] });
  });

  it('moves at once when no attached session has a turn Running', () => {
    expect(plan({})).toEqual({ kind: 'Moving', drains: [drain], since: now, because: 'NoTurnRunning' });
  });

  it('holds while a turn is Running, until holdSeconds after the drain was first seen', () => {
    const since = new Date(now.getTime() - 299_000);
    const held = plan({ runningTurns: 1, since });
    expect(held).toEqual({
      kind: 'Holding',
      drains: [drain],
      since,
      until: new Date(since.getTime() + 300_000),
      runningTurns: 1,
    });
    expect(holdRemainingMs(held, now)).toBe(1000);
  });

  it('moves once the hold ends, turns or not (the boundary included)', () => {
    const since = new Date(now.getTime() - 300_000);
    expect(plan({ runningTurns: 4, since })).toEqual({
      kind: 'Moving',
      drains: [drain],
      since,
      because: 'HoldEnded',
    });
    expect(plan({ runningTurns: 1, holdSeconds: 0 })).toMatchObject({ kind: 'Moving', because: 'HoldEnded' });
  });

  it('asks for no timed look unless it holds', () => {
    expect(holdRemainingMs(plan({}), now)).toBeUndefined();
    expect(holdRemainingMs(plan({ policy: 'Block' }), now)).toBeUndefined();
    expect(holdRemainingMs(plan({ drains: [] }), now)).toBeUndefined();
    const late = plan({ runningTurns: 1, since: new Date(now.getTime() - 10_000), holdSeconds: 20 });
    expect(holdRemainingMs(late, new Date(now.getTime() + 60_000))).toBe(0);
  });
});

describe('movedMessage', () => {
  it('names the pod, the node, the cause and why it moves now', () => {
    expect(movedMessage(drain, 'NoTurnRunning')).toBe(
      'deleted pod sbx-0 on node n1 (Cordoned, being drained) to move it: no attached session has a turn ' +
        'Running; its replacement is created on another node',
    );
    expect(movedMessage({ ...drain, cause: 'Karpenter' }, 'HoldEnded')).toContain(
      '(Karpenter, being drained) to move it: the hold ended with turns still Running;',
    );
  });
});

describe('replacementWaitMs', () => {
  const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
  const ended = (ms: number) => ({ status: 'False', reason: 'DrainEnded', lastTransitionTime: at(ms) });

  it('keeps the whole wait ahead when the drain has just ended (the condition still True)', () => {
    const seen = { status: 'True', reason: 'NodeDraining', lastTransitionTime: at(-60_000) };
    expect(replacementWaitMs(seen, 'None', now)).toBe(NAME_FREE_MS);
    expect(replacementWaitMs(seen, 'Holding', now)).toBeUndefined();
    expect(replacementWaitMs(seen, 'Moving', now)).toBeUndefined();
  });

  it('counts down from the end of the drain, then lets the pod be created', () => {
    expect(replacementWaitMs(ended(-5_000), 'None', now)).toBe(NAME_FREE_MS - 5_000);
    expect(replacementWaitMs(ended(-NAME_FREE_MS), 'None', now)).toBeUndefined();
    expect(replacementWaitMs(ended(-NAME_FREE_MS + 1), 'None', now)).toBe(1);
  });

  it('never waits for a sandbox that was not drained', () => {
    expect(replacementWaitMs(undefined, 'None', now)).toBeUndefined();
    const fresh = { status: 'False', reason: 'NoDrain', lastTransitionTime: at(0) };
    expect(replacementWaitMs(fresh, 'None', now)).toBeUndefined();
    const blocked = { status: 'False', reason: 'PolicyBlock', lastTransitionTime: at(0) };
    expect(replacementWaitMs(blocked, 'Blocked', now)).toBeUndefined();
  });
});

describe('disruptingMessage', () => {
  it('names the node, its drainer, the pod and the deadline counted from the drain’s first sight', () => {
    const since = new Date('2026-12-02T09:59:00Z');
    expect(disruptingMessage({ kind: 'Moving', drains: [drain], since, because: 'NoTurnRunning' }, 90)).toBe(
      'node n1 (Cordoned) being drained; pod sbx-0 moves to another node once no attached session has a turn ' +
        'Running, at the latest at 2026-12-02T10:00:30Z (disruption policy Reschedule)',
    );
  });

  it('speaks of every node once and of every pod', () => {
    const drains: PodDrain[] = [
      drain,
      { node: 'n1', cause: 'Cordoned', pod: 'sbx-1', uid: 'u1' },
      { node: 'n2', cause: 'Karpenter', pod: 'sbx-2', uid: 'u2' },
    ];
    const since = now;
    const until = new Date(now.getTime() + 1000);
    expect(disruptingMessage({ kind: 'Holding', drains, since, until, runningTurns: 1 }, 1)).toBe(
      'nodes n1 (Cordoned), n2 (Karpenter) being drained; pods sbx-0, sbx-1, sbx-2 move to another node once ' +
        'no attached session has a turn Running, at the latest at 2026-12-02T10:00:01Z (disruption policy ' +
        'Reschedule)',
    );
  });
});
