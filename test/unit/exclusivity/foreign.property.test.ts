import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS } from '../../../operator/api/index.ts';
import {
  buildReferenceIndex,
  decideExclusivity,
  tombstonesToPrune,
  type LegacyEvidence,
  type ReferenceEntry,
} from '../../../operator/exclusivity/index.ts';

const worktree = fc.option(fc.constantFrom('wt-1', 'wt-2', 'wt-3'), { nil: undefined });
const entryFields = {
  name: fc.stringMatching(/^[a-z]{1,8}$/),
  session: fc.stringMatching(/^workspace_[0-9]{1,4}$/),
  state: fc.constantFrom('Attached' as const, 'Detached' as const),
  role: fc.constantFrom('Root' as const, 'Subagent' as const, 'Board' as const, 'Ticket' as const),
  route: fc.string({ maxLength: 40 }),
  parentSession: fc.constant(undefined),
};
const entry: fc.Arbitrary<ReferenceEntry> = fc.record({ ...entryFields, worktree });
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

/**
 * A sandbox's worktree and a reference foreign to it, by construction from the rule's three reasons (the
 * rule stated, not the predicate under test): the reference has no worktree, the sandbox has none, or
 * they differ.
 */
const foreignPair = fc
  .record({
    reason: fc.constantFrom('reference has none', 'sandbox has none', 'both have none', 'they differ'),
    a: fc.constantFrom('wt-1', 'wt-2', 'wt-3'),
    offset: fc.integer({ min: 1, max: 2 }),
  })
  .chain(({ reason, a, offset }) => {
    const b = `wt-${((Number(a.slice(3)) - 1 + offset) % 3) + 1}`;
    const [target, foreign]: [string | undefined, string | undefined] =
      reason === 'reference has none'
        ? [a, undefined]
        : reason === 'sandbox has none'
          ? [undefined, a]
          : reason === 'both have none'
            ? [undefined, undefined]
            : [a, b];
    return fc.record({
      target: fc.constant(target),
      foreign: fc.record({ ...entryFields, worktree: fc.constant(foreign) }),
    });
  });
/** References of the target's own worktree, by construction. */
const ownTo = (target: string): fc.Arbitrary<ReferenceEntry> =>
  fc.record({ ...entryFields, worktree: fc.constant(target) });

describe('the exclusivity verdict, for any index', () => {
  it('is never Exclusive when the index holds a foreign reference', () => {
    fc.assert(
      fc.property(
        foreignPair,
        fc.array(entry, { maxLength: 40 }),
        legacy,
        ({ target, foreign }, rest, evidence) => {
          const index = buildReferenceIndex([...rest, foreign], INDEX_LIMITS);
          expect(
            decideExclusivity({ index, target: { worktree: target }, legacy: evidence }).verdict,
          ).not.toBe('Exclusive');
        },
      ),
    );
  });

  it('is Foreign, naming it, for one foreign reference among the target’s own', () => {
    const sandbox = foreignPair.chain(({ target, foreign }) =>
      fc.record({
        target: fc.constant(target),
        foreign: fc.constant({ ...foreign, name: 'foreign' }),
        own:
          target === undefined
            ? fc.constant<ReferenceEntry[]>([])
            : fc.array(ownTo(target), { maxLength: 20 }),
      }),
    );
    fc.assert(
      fc.property(sandbox, legacy, ({ target, foreign, own }, evidence) => {
        const index = buildReferenceIndex(
          [...own.filter((e) => e.name !== 'foreign'), foreign],
          INDEX_LIMITS,
        );
        expect(decideExclusivity({ index, target: { worktree: target }, legacy: evidence })).toMatchObject({
          verdict: 'Foreign',
          evidence: 'Index',
          blockingReferences: ['foreign'],
          blockingCount: 1,
        });
      }),
    );
  });

  it('is Exclusive with the marker when every reference is of the target’s own worktree', () => {
    const sandbox = fc
      .constantFrom('wt-1', 'wt-2', 'wt-3')
      .chain((target) =>
        fc.record({ target: fc.constant(target), entries: fc.array(ownTo(target), { maxLength: 40 }) }),
      );
    fc.assert(
      fc.property(sandbox, ({ target, entries }) => {
        const index = buildReferenceIndex(entries, INDEX_LIMITS);
        expect(
          decideExclusivity({ index, target: { worktree: target }, legacy: { kind: 'Marked' } }),
        ).toMatchObject({
          verdict: 'Exclusive',
          evidence: 'Index',
        });
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
