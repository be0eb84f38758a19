/**
 * The worktree prune: when a worktree is deleted, its own tombstones (detached references recorded from
 * that worktree) are cleared. Attached references, other worktrees' tombstones and references with no
 * worktree are never pruned: they are someone else's evidence.
 */
import type { ReferenceEntry } from './reference.ts';

export function tombstonesToPrune(
  entries: Iterable<ReferenceEntry>,
  worktree: string | undefined,
): ReferenceEntry[] {
  if (worktree === undefined) return [];
  return [...entries].filter((entry) => entry.state === 'Detached' && entry.worktree === worktree);
}
