import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS } from '../../../operator/api/index.ts';
import {
  buildReferenceIndex,
  decideExclusivity,
  isForeignReference,
  tombstonesToPrune,
  type LegacyEvidence,
  type ReferenceEntry,
} from '../../../operator/index/index.ts';

const worktree = fc.option(fc.constantFrom('wt-1', 'wt-2', 'wt-3'), { nil: undefined });
const entry: fc.Arbitrary<ReferenceEntry> = fc.record({
  name: fc.stringMatching(/^[a-z]{1,8}$/),
  session: fc.stringMatching(/^workspace_[0-9]{1,4}$/),
  worktree,
  state: fc.constantFrom('Attached' as const, 'Detached' as const),
  role: fc.constantFrom('Root' as const, 'Subagent' as const, 'Board' as const, 'Ticket' as const),
  route: fc.string({ maxLength: 40 }),
  parentSession: fc.constant(undefined),
});
const legacy: fc.Arbitrary<LegacyEvidence> = fc.constantFrom<LegacyEvidence>(
  { kind: 'Marked' },
  { kind: 'NotConfigured' },
  {
    kind: 'Reconciled',
    outcome: {
      kind: 'Complete',
      stats: { owners: 0, lookedUp: 0, skippedLegacy: 0, timedOut: 0, failed: 0, elapsedMs: 0 },
    },
  },
);

describe('the exclusivity verdict, for any index', () => {
  it('is never Exclusive when the index holds a foreign reference', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), worktree, legacy, (entries, target, evidence) => {
        fc.pre(entries.some((e) => isForeignReference(e, { worktree: target })));
        const index = buildReferenceIndex(entries, INDEX_LIMITS);
        expect(decideExclusivity({ index, target: { worktree: target }, legacy: evidence }).verdict).not.toBe(
          'Exclusive',
        );
      }),
    );
  });

  it('is never Exclusive for an overflowed index', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 30 }), worktree, legacy, (entries, target, evidence) => {
        const index = buildReferenceIndex(entries, { maxReferences: 512, maxBytes: 64 });
        fc.pre(index.overflowed);
        expect(decideExclusivity({ index, target: { worktree: target }, legacy: evidence }).verdict).toBe(
          'Overflowed',
        );
      }),
    );
  });

  it('does not change after the worktree prune removes the target worktree’s tombstones', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), worktree, (entries, target) => {
        const pruned = new Set(tombstonesToPrune(entries, target));
        const before = decideExclusivity({
          index: buildReferenceIndex(entries, INDEX_LIMITS),
          target: { worktree: target },
          legacy: { kind: 'Marked' },
        });
        const after = decideExclusivity({
          index: buildReferenceIndex(
            entries.filter((e) => !pruned.has(e)),
            INDEX_LIMITS,
          ),
          target: { worktree: target },
          legacy: { kind: 'Marked' },
        });
        expect(after.verdict).toBe(before.verdict);
      }),
    );
  });
});
