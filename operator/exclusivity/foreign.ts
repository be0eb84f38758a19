/**
 * The one exclusivity predicate: is this evidence foreign to the target worktree?
 *
 * Attached references and detached tombstones count alike. A reference with no worktree is foreign to
 * every worktree, and every reference is foreign to a sandbox that belongs to no worktree. An overflowed
 * index is foreign by definition (it fails closed). Nothing else in the operator decides foreignness.
 */
import type { ReferenceEntry } from './reference.ts';
import type { ReferenceIndex } from './reference-index.ts';

/** The worktree whose deletion is being decided (the sandbox's own worktree). */
export type ExclusivityTarget = { readonly worktree: string | undefined };

/** Evidence that a session uses the sandbox: a reference, or an owner found by the legacy walk. */
export type UseEvidence = { readonly worktree: string | undefined };

/** Own only when both name the same worktree; an absent target worktree already differs from a present one. */
export function isForeignReference(evidence: UseEvidence, target: ExclusivityTarget): boolean {
  return evidence.worktree === undefined || evidence.worktree !== target.worktree;
}

export function hasForeignReference(index: ReferenceIndex, target: ExclusivityTarget): boolean {
  return index.overflowed || index.entries.some((entry) => isForeignReference(entry, target));
}

/** The foreign references themselves, in name order; for naming blockers, not for deciding. */
export function foreignReferences(
  index: ReferenceIndex,
  target: ExclusivityTarget,
): readonly ReferenceEntry[] {
  return index.entries.filter((entry) => isForeignReference(entry, target));
}
