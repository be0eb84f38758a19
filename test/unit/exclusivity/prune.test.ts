import { describe, expect, it } from 'vitest';
import { tombstonesToPrune } from '../../../operator/exclusivity/index.ts';
import { attached, tombstone } from '../fixtures.ts';

describe('tombstonesToPrune', () => {
  const entries = [
    tombstone('own-gone', 'wt-1'),
    attached('own-live', 'wt-1'),
    tombstone('other-gone', 'wt-2'),
    tombstone('no-worktree', undefined),
  ];

  it('clears only the detached references of the pruned worktree', () => {
    expect(tombstonesToPrune(entries, 'wt-1').map((e) => e.name)).toEqual(['own-gone']);
  });

  it('never prunes for a sandbox with no worktree', () => {
    expect(tombstonesToPrune(entries, undefined)).toEqual([]);
  });
});
