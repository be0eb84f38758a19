import { describe, expect, it } from 'vitest';
import {
  becameReady,
  boundStatus,
  readyOf,
  sameStatus,
  unboundStatus,
  withCondition,
} from '../../../../operator/controller/binding/claim-status.ts';
import { poolSandbox } from './fixtures.ts';

const t0 = new Date('2026-12-03T07:00:00.123Z');
const t1 = new Date('2026-12-03T07:00:05Z');
const binding = {
  sandbox: 'p-1',
  reference: 'ref',
  launchType: 'Warm' as const,
  boundAt: '2026-12-03T07:00:00Z',
};

describe('a claim’s conditions', () => {
  it('move lastTransitionTime only when the status changes, and keep Bound before Ready', () => {
    const first = withCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'A', message: 'a' },
      t0,
      1,
    );
    expect(first).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'A',
        message: 'a',
        lastTransitionTime: '2026-12-03T07:00:00Z',
        observedGeneration: 1,
      },
    ]);
    const same = withCondition(first, { type: 'Ready', status: 'False', reason: 'B', message: 'b' }, t1, 2);
    expect(same[0]).toMatchObject({
      reason: 'B',
      lastTransitionTime: '2026-12-03T07:00:00Z',
      observedGeneration: 2,
    });
    const flipped = withCondition(same, { type: 'Ready', status: 'True', reason: 'C', message: 'c' }, t1, 2);
    expect(flipped[0]?.lastTransitionTime).toBe('2026-12-03T07:00:05Z');
    const both = withCondition(flipped, { type: 'Bound', status: 'True', reason: 'D', message: 'd' }, t1, 2);
    expect(both.map((c) => c.type)).toEqual(['Bound', 'Ready']);
    const other = withCondition(both, { type: 'Zeta', status: 'True', reason: 'E', message: 'e' }, t1, 2);
    expect(
      withCondition(other, { type: 'Bound', status: 'True', reason: 'D', message: 'd' }, t1, 2).map(
        (c) => c.type,
      ),
    ).toEqual(['Bound', 'Ready', 'Zeta']);
    const zeta = withCondition(undefined, { type: 'Zeta', status: 'True', reason: 'E', message: 'e' }, t0, 1);
    const ready = withCondition(zeta, { type: 'Ready', status: 'True', reason: 'C', message: 'c' }, t1, 1);
    expect(ready.map((c) => c.type)).toEqual(['Ready', 'Zeta']);
    // Another condition of the same status is not this one's past: Ready is new, so it moves now.
    expect(ready[0]?.lastTransitionTime).toBe('2026-12-03T07:00:05Z');
  });

  it('Ready follows the bound sandbox, or says why there is none to follow', () => {
    expect(readyOf('p-1', poolSandbox('p-1'))).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'SandboxReady',
      message: 'sandbox p-1 is Ready',
    });
    expect(readyOf('p-1', poolSandbox('p-1', { ready: { status: 'False', reason: 'PodsPending' } }))).toEqual(
      {
        type: 'Ready',
        status: 'False',
        reason: 'SandboxNotReady',
        message: 'waiting for sandbox p-1 to be Ready (PodsPending)',
      },
    );
    expect(readyOf('p-1', poolSandbox('p-1', { ready: { status: 'Unknown' } })).message).toBe(
      'waiting for sandbox p-1 to be Ready',
    );
    expect(readyOf('p-1', poolSandbox('p-1', { deleting: true }))).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'SandboxDeleting',
      message: 'the bound sandbox p-1 is being deleted',
    });
    expect(readyOf('p-1', undefined)).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'SandboxGone',
      message: 'the bound sandbox p-1 does not exist any more',
    });
  });

  it('a bound status carries the binding, Bound True by launch type and Ready', () => {
    const status = boundStatus({}, binding, poolSandbox('p-1'), t0, 1);
    expect(status).toMatchObject({ ...binding, observedGeneration: 1 });
    expect(status.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Bound', 'True', 'WarmSandboxBound'],
      ['Ready', 'True', 'SandboxReady'],
    ]);
    const cold = boundStatus({}, { ...binding, launchType: 'Cold' }, undefined, t0, 1);
    expect(cold.conditions?.[0]).toMatchObject({
      reason: 'ColdSandboxBound',
      message: expect.stringContaining('created from the template') as unknown,
    });
    expect(status.conditions?.[0]?.message).toContain('bound ready pool sandbox p-1; session reference ref');
  });

  it('an unbound status says why in Bound and is not Ready', () => {
    const status = unboundStatus(
      {},
      { reason: 'WarmPoolNotFound', message: 'spec.warmPoolRef.name: …' },
      t0,
      1,
    );
    expect(status.sandbox).toBeUndefined();
    expect(status.observedGeneration).toBe(1);
    expect(status.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['Bound', 'False', 'WarmPoolNotFound', 'spec.warmPoolRef.name: …'],
      ['Ready', 'False', 'NotBound', 'no sandbox is bound yet'],
    ]);
  });

  it('knows when Ready turned True, and when a status changes nothing', () => {
    const ready = boundStatus({}, binding, poolSandbox('p-1'), t0, 1);
    const waiting = boundStatus({}, binding, poolSandbox('p-1', { ready: { status: 'False' } }), t0, 1);
    expect(becameReady({}, ready)).toBe(true);
    expect(becameReady(waiting, ready)).toBe(true);
    expect(becameReady(ready, ready)).toBe(false);
    expect(becameReady({}, waiting)).toBe(false);
    expect(sameStatus(ready, boundStatus(ready, binding, poolSandbox('p-1'), t1, 1))).toBe(true);
    expect(sameStatus(ready, waiting)).toBe(false);
    expect(sameStatus(ready, { ...ready, boundAt: 'x' })).toBe(false);
    expect(sameStatus(ready, boundStatus(ready, binding, poolSandbox('p-1'), t1, 2))).toBe(false);
    expect(sameStatus({}, { conditions: [] })).toBe(true);
  });
});
