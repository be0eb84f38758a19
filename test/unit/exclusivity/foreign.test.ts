import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS } from '../../../operator/api/index.ts';
import {
  buildReferenceIndex,
  foreignReferences,
  hasForeignReference,
  isForeignReference,
} from '../../../operator/exclusivity/index.ts';
import { attached, tombstone } from '../fixtures.ts';

describe('isForeignReference', () => {
  // Every combination of the two worktrees: only the same, present worktree is not foreign.
  it.each<[string | undefined, string | undefined, boolean]>([
    ['wt-1', 'wt-1', false],
    ['wt-2', 'wt-1', true],
    [undefined, 'wt-1', true],
    ['wt-1', undefined, true],
    [undefined, undefined, true],
  ])('a reference from %s is foreign to a sandbox of %s: %s', (reference, sandbox, foreign) => {
    expect(isForeignReference({ worktree: reference }, { worktree: sandbox })).toBe(foreign);
  });
});

describe('hasForeignReference and foreignReferences', () => {
  it('find a reference with no worktree foreign to a sandbox with no worktree', () => {
    const index = buildReferenceIndex([tombstone('legacy', undefined)], INDEX_LIMITS);
    expect(hasForeignReference(index, { worktree: undefined })).toBe(true);
    expect(foreignReferences(index, { worktree: undefined }).map((e) => e.name)).toEqual(['legacy']);
  });

  it('name only the foreign references, in name order', () => {
    const index = buildReferenceIndex(
      [attached('d', 'wt-2'), attached('c', 'wt-1'), tombstone('b', undefined), tombstone('a', 'wt-1')],
      INDEX_LIMITS,
    );
    expect(hasForeignReference(index, { worktree: 'wt-1' })).toBe(true);
    expect(foreignReferences(index, { worktree: 'wt-1' }).map((e) => e.name)).toEqual(['b', 'd']);
  });

  it('find nothing foreign in an index of the target’s own references', () => {
    const index = buildReferenceIndex([attached('a', 'wt-1'), tombstone('b', 'wt-1')], INDEX_LIMITS);
    expect(hasForeignReference(index, { worktree: 'wt-1' })).toBe(false);
    expect(foreignReferences(index, { worktree: 'wt-1' })).toEqual([]);
  });
});
