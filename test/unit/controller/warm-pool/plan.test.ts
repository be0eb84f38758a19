import { describe, expect, it } from 'vitest';
import {
  isStale,
  planPool,
  shrinkOrder,
  type Expected,
  type PoolSandbox,
  type PoolWant,
} from '../../../../operator/controller/warm-pool/plan.ts';

const template = { name: 'python-agent', generation: 2 };
const want = (replicas: number, overrides: Partial<PoolWant> = {}): PoolWant => ({
  replicas,
  strategy: 'OnReplenish',
  template,
  ...overrides,
});
const none: Expected = { creating: 0, deleting: new Set() };

let serial = 0;
const sandbox = (overrides: Partial<PoolSandbox> = {}): PoolSandbox => {
  serial += 1;
  return {
    name: `pool-${serial}`,
    uid: `uid-${serial}`,
    resourceVersion: `${serial}`,
    ready: true,
    claimed: false,
    deleting: false,
    template: 'python-agent',
    templateGeneration: '2',
    createdAt: `2026-12-03T07:00:${String(serial % 60).padStart(2, '0')}Z`,
    ...overrides,
  };
};
const names = (list: readonly { name: string }[]) => list.map((s) => s.name);

describe('planPool', () => {
  it('makes what is missing, and says the counts', () => {
    const ready = sandbox();
    const starting = sandbox({ ready: false });
    expect(planPool(want(3), [ready, starting], none, 50)).toEqual({
      create: 1,
      delete: [],
      more: false,
      counts: { replicas: 2, ready: 1, pending: 1 },
    });
  });

  it('counts sandboxes made but not cached yet, so a stale cache never makes too many', () => {
    const plan = planPool(want(3), [sandbox()], { creating: 2, deleting: new Set() }, 50);
    expect(plan.create).toBe(0);
    expect(plan.counts).toEqual({ replicas: 1, ready: 1, pending: 2 });
  });

  it('makes at most maxCreates in one turn, and asks to come back for the rest', () => {
    expect(planPool(want(5), [], none, 3)).toMatchObject({ create: 3, more: true });
    expect(planPool(want(3), [], none, 3)).toMatchObject({ create: 3, more: false });
  });

  it('never counts, nor deletes, a claimed sandbox', () => {
    const claimed = sandbox({ claimed: true });
    const plan = planPool(want(0), [claimed], none, 50);
    expect(plan.delete).toEqual([]);
    expect(plan.counts).toEqual({ replicas: 0, ready: 0, pending: 0 });
    expect(planPool(want(1), [claimed], none, 50).create).toBe(1);
  });

  it('does not count a sandbox being deleted, or one it deleted that the cache still shows', () => {
    const deleting = sandbox({ deleting: true });
    const deleted = sandbox();
    const plan = planPool(
      want(2),
      [deleting, deleted],
      { creating: 0, deleting: new Set([deleted.name]) },
      50,
    );
    expect(plan.create).toBe(2);
    expect(plan.delete).toEqual([]);
    expect(plan.counts.replicas).toBe(0);
  });

  it('shrinks by deleting not-ready ones first, then the newest, each with its uid and version', () => {
    const oldReady = sandbox({ createdAt: '2026-12-03T07:00:00Z' });
    const newReady = sandbox({ createdAt: '2026-12-03T07:05:00Z' });
    const notReady = sandbox({ ready: false, createdAt: '2026-12-03T06:00:00Z' });
    const plan = planPool(want(1), [oldReady, newReady, notReady], none, 50);
    expect(plan.create).toBe(0);
    expect(plan.delete).toEqual([
      { name: notReady.name, uid: notReady.uid, resourceVersion: notReady.resourceVersion, reason: 'Shrink' },
      { name: newReady.name, uid: newReady.uid, resourceVersion: newReady.resourceVersion, reason: 'Shrink' },
    ]);
  });

  it('shrinks against what is being made too, but deletes only sandboxes that exist', () => {
    const one = sandbox();
    expect(names(planPool(want(1), [one], { creating: 1, deleting: new Set() }, 50).delete)).toEqual([
      one.name,
    ]);
    expect(planPool(want(0), [], { creating: 2, deleting: new Set() }, 50).delete).toEqual([]);
  });

  it('under Recreate, deletes unclaimed sandboxes of an older generation or another template, and replaces them', () => {
    const current = sandbox();
    const older = sandbox({ templateGeneration: '1' });
    const other = sandbox({ template: 'other' });
    const claimedOld = sandbox({ templateGeneration: '1', claimed: true });
    const plan = planPool(want(3, { strategy: 'Recreate' }), [current, older, other, claimedOld], none, 50);
    expect(plan.delete).toEqual([
      { name: older.name, uid: older.uid, resourceVersion: older.resourceVersion, reason: 'Stale' },
      { name: other.name, uid: other.uid, resourceVersion: other.resourceVersion, reason: 'Stale' },
    ]);
    expect(plan.create).toBe(2);
    expect(plan.counts.replicas).toBe(3);
  });

  it('under OnReplenish, keeps sandboxes of an older generation and counts them', () => {
    const older = sandbox({ templateGeneration: '1' });
    const plan = planPool(want(1), [older], none, 50);
    expect(plan).toMatchObject({ create: 0, delete: [] });
  });

  it('without its template, makes nothing and replaces nothing, but still shrinks', () => {
    const older = sandbox({ templateGeneration: '1' });
    const extra = sandbox();
    expect(planPool(want(5, { template: undefined }), [], none, 50).create).toBe(0);
    const plan = planPool(want(1, { strategy: 'Recreate', template: undefined }), [older, extra], none, 50);
    expect(plan.delete).toHaveLength(1);
    expect(plan.delete[0]?.reason).toBe('Shrink');
  });
});

describe('isStale', () => {
  it('is true for another template or another generation, false for the same', () => {
    expect(isStale(sandbox(), template)).toBe(false);
    expect(isStale(sandbox({ templateGeneration: '3' }), template)).toBe(true);
    expect(isStale(sandbox({ templateGeneration: undefined }), template)).toBe(true);
    expect(isStale(sandbox({ template: 'other' }), template)).toBe(true);
  });
});

describe('shrinkOrder', () => {
  it('puts not-ready first, then the newest, then by name; one without a creation time is oldest', () => {
    const a = sandbox({ name: 'a', createdAt: '2026-12-03T07:00:00Z' });
    const b = sandbox({ name: 'b', createdAt: '2026-12-03T07:00:00Z' });
    const newer = sandbox({ name: 'c', createdAt: '2026-12-03T08:00:00Z' });
    const unborn = sandbox({ name: 'd', createdAt: undefined });
    const notReady = sandbox({ name: 'e', ready: false, createdAt: '2026-12-03T06:00:00Z' });
    expect(names([unborn, b, a, newer, notReady].sort(shrinkOrder))).toEqual(['e', 'c', 'a', 'b', 'd']);
    expect(shrinkOrder(a, a)).toBe(0);
    expect(Math.sign(shrinkOrder(a, notReady))).toBe(1);
    expect(Math.sign(shrinkOrder(notReady, a))).toBe(-1);
  });
});
