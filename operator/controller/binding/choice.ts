/**
 * Which pool sandbox a warm claim binds, pure (docs/warm-pools.md, "Claims"). A candidate is one the pool
 * keeps ready for a claim: labelled with the pool, controlled by that pool (its uid, so a same-named newer
 * pool's sandbox is not taken for the old one's), bound to no claim, not being deleted, not fenced, Ready.
 *
 * Claims arriving together would all race for the same sandbox if each took the first, and all but one would
 * lose the resourceVersion test and try again: each claim starts at its own place in the candidates (a hash
 * of its uid), so a burst spreads over the pool. Which one a claim binds does not matter, only that the
 * binding's JSON Patch lets exactly one claim win each sandbox.
 */
import { createHash } from 'node:crypto';
import type { BindingSandbox } from './records.ts';

export type PoolIdentity = { readonly name: string; readonly uid: string };

/** The pool's controller owner reference on an unclaimed sandbox; undefined when there is none. */
export function poolOwnerIndex(sandbox: BindingSandbox, pool: PoolIdentity): number | undefined {
  const index = sandbox.owners.findIndex(
    (owner) => owner.controller && owner.kind === 'SandboxWarmPool' && owner.uid === pool.uid,
  );
  return index < 0 ? undefined : index;
}

export function isWarmCandidate(sandbox: BindingSandbox, pool: PoolIdentity): boolean {
  return (
    sandbox.pool === pool.name &&
    sandbox.claim === undefined &&
    !sandbox.deleting &&
    !sandbox.fenced &&
    sandbox.ready.status === 'True' &&
    poolOwnerIndex(sandbox, pool) !== undefined
  );
}

/** The candidate this claim tries next, skipping the names it already tried; undefined when none is left. */
export function chooseWarmSandbox(
  sandboxes: readonly BindingSandbox[],
  pool: PoolIdentity,
  claimUid: string,
  tried: ReadonlySet<string>,
): BindingSandbox | undefined {
  const candidates = sandboxes
    .filter((sandbox) => isWarmCandidate(sandbox, pool) && !tried.has(sandbox.name))
    .sort((a, b) => a.name.localeCompare(b.name));
  // None left: the index is NaN, and so the candidate undefined.
  return candidates[spread(claimUid) % candidates.length];
}

/** A claim's starting place: the first 32 bits of a hash of its uid. */
export const spread = (claimUid: string): number =>
  createHash('sha256').update(claimUid).digest().readUInt32BE(0);
