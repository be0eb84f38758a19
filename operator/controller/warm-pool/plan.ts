/**
 * Pure: what a warm pool's turn does (docs/warm-pools.md). A pool keeps `spec.replicas` unclaimed sandboxes
 * of its template: it makes the missing ones, deletes extras when it shrinks (not-ready first, then the
 * newest) and, under Recreate, unclaimed sandboxes of an older template. A claimed sandbox is never
 * counted, nor touched. Sandboxes it made that the cache has not shown yet (create expectations) count as
 * there, so a stale cache never makes too many; sandboxes it deleted that the cache still shows count as gone.
 */
import type { UpdateStrategy } from '../../api/sandbox-warm-pool.ts';
import type { PoolSandboxRecord } from '../cache/warm-pools.ts';

/** What the pool's turn reads of one of its sandboxes (cache/warm-pools.ts). */
export type PoolSandbox = Omit<PoolSandboxRecord, 'pool'>;

export type PoolWant = {
  readonly replicas: number;
  readonly strategy: UpdateStrategy;
  /** The pool's template as cached; undefined while it does not exist (nothing is made then). */
  readonly template: { readonly name: string; readonly generation: number } | undefined;
};

export type Expected = {
  /** Sandboxes made and not yet in the cache. */
  readonly creating: number;
  /** Names deleted that the cache still shows undeleted. */
  readonly deleting: ReadonlySet<string>;
};

export type DeletionReason = 'Shrink' | 'Stale';

export type Doomed = {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly reason: DeletionReason;
};

export type PoolCounts = {
  /** Unclaimed sandboxes that exist and are not being deleted (status.replicas, the /scale status). */
  readonly replicas: number;
  readonly ready: number;
  /** Wanted but not ready yet: unclaimed ones not ready, and ones being made. */
  readonly pending: number;
};

export type PoolPlan = {
  readonly create: number;
  readonly delete: readonly Doomed[];
  /** More are missing than one turn makes: the turn comes back at once. */
  readonly more: boolean;
  readonly counts: PoolCounts;
};

/** Whether an unclaimed sandbox was made from an older blueprint than the template's (or another template). */
export function isStale(sandbox: PoolSandbox, template: NonNullable<PoolWant['template']>): boolean {
  return sandbox.template !== template.name || sandbox.templateGeneration !== String(template.generation);
}

/** Shrink order: not-ready before ready, then the newest first, then by name (a stable order). */
export function shrinkOrder(a: PoolSandbox, b: PoolSandbox): number {
  if (a.ready !== b.ready) return a.ready ? 1 : -1;
  const byAge = (b.createdAt ?? '').localeCompare(a.createdAt ?? '');
  return byAge !== 0 ? byAge : a.name.localeCompare(b.name);
}

export function planPool(
  want: PoolWant,
  sandboxes: readonly PoolSandbox[],
  expected: Expected,
  maxCreates: number,
): PoolPlan {
  const unclaimed = sandboxes.filter(
    (sandbox) => !sandbox.claimed && !sandbox.deleting && !expected.deleting.has(sandbox.name),
  );
  const { template } = want;
  const recreating = want.strategy === 'Recreate' && template !== undefined;
  const stale = recreating ? unclaimed.filter((sandbox) => isStale(sandbox, template)) : [];
  const fresh = unclaimed.filter((sandbox) => !stale.includes(sandbox));
  const supply = fresh.length + expected.creating;
  const extras = [...fresh].sort(shrinkOrder).slice(0, Math.max(0, supply - want.replicas));
  const missing = template === undefined ? 0 : Math.max(0, want.replicas - supply);
  const ready = unclaimed.filter((sandbox) => sandbox.ready).length;
  return {
    create: Math.min(missing, maxCreates),
    delete: [
      ...stale.map((sandbox) => doomed(sandbox, 'Stale')),
      ...extras.map((sandbox) => doomed(sandbox, 'Shrink')),
    ],
    more: missing > maxCreates,
    counts: {
      replicas: unclaimed.length,
      ready,
      pending: unclaimed.length - ready + expected.creating,
    },
  };
}

const doomed = (sandbox: PoolSandbox, reason: DeletionReason): Doomed => ({
  name: sandbox.name,
  uid: sandbox.uid,
  resourceVersion: sandbox.resourceVersion,
  reason,
});
