/**
 * The reason of every verdict, word for word: the controller republishes status, conditions and Events
 * only when the verdict or its reason changes, so a reason is behaviour, not decoration.
 */
import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS, MalformedObjectError } from '../../../operator/api/index.ts';
import {
  buildReferenceIndex,
  decideExclusivity,
  EMPTY_INDEX,
  type ReferenceEntry,
} from '../../../operator/exclusivity/index.ts';
import type { ReconciliationOutcome } from '../../../operator/ledger-walk/index.ts';
import { attached, ownReferences, tombstone } from '../fixtures.ts';

const marked = { kind: 'Marked' } as const;
const wt1 = { worktree: 'wt-1' };
const unrooted = { worktree: undefined };
const stats = { owners: 3, lookedUp: 1, skippedLegacy: 2, timedOut: 0, failed: 0, elapsedMs: 10 };
const index = (entries: ReferenceEntry[]) => buildReferenceIndex(entries, INDEX_LIMITS);
const reconciled = (outcome: ReconciliationOutcome, target: { worktree: string | undefined } = wt1) =>
  decideExclusivity({ index: EMPTY_INDEX, target, legacy: { kind: 'Reconciled', outcome } });

describe('the reason of an index verdict', () => {
  it('counts the foreign references and describes the first by name, session, state and worktree', () => {
    const verdict = decideExclusivity({
      index: index([attached('own', 'wt-1'), attached('other', 'wt-2'), attached('zz', 'wt-3')]),
      target: wt1,
      legacy: marked,
    });
    expect(verdict).toEqual({
      verdict: 'Foreign',
      evidence: 'Index',
      blockingReferences: ['other', 'zz'],
      blockingCount: 2,
      reason:
        '2 reference(s) foreign to worktree wt-1, first other (session workspace_other, Attached, worktree wt-2)',
    });
  });

  it('says when the first foreign reference has no worktree', () => {
    const verdict = decideExclusivity({
      index: index([tombstone('legacy', undefined)]),
      target: wt1,
      legacy: marked,
    });
    expect(verdict.reason).toBe(
      '1 reference(s) foreign to worktree wt-1, first legacy (session workspace_legacy, Detached, no worktree)',
    );
  });

  it('says when the sandbox has no worktree', () => {
    const verdict = decideExclusivity({
      index: index([attached('a', 'wt-1')]),
      target: unrooted,
      legacy: marked,
    });
    expect(verdict.reason).toBe(
      '1 reference(s) foreign to a sandbox with no worktree, first a (session workspace_a, Attached, worktree wt-1)',
    );
  });

  it('names the limit, the observed value and the maximum of an overflow, and the way out', () => {
    const verdict = decideExclusivity({ index: index(ownReferences(513)), target: wt1, legacy: marked });
    expect(verdict.reason).toBe(
      'reference index over capacity (References: 513 > 512); erase the index to release',
    );
  });

  it('says why an index is exclusive, for a worktree and for a sandbox with none', () => {
    expect(decideExclusivity({ index: index([attached('a', 'wt-1')]), target: wt1, legacy: marked })).toEqual(
      {
        verdict: 'Exclusive',
        evidence: 'Index',
        reason: 'no reference foreign to worktree wt-1',
      },
    );
    expect(decideExclusivity({ index: EMPTY_INDEX, target: unrooted, legacy: marked }).reason).toBe(
      'no reference foreign to a sandbox with no worktree',
    );
  });

  it('counts unreadable references and quotes the first', () => {
    const unreadable = [
      new MalformedObjectError('SessionReference', 'team-a/odd', 'spec.state', 'Invalid option'),
      new MalformedObjectError('SessionReference', 'team-a/odder', 'spec.role', 'Invalid option'),
    ];
    // Unreadable references come first, even before an overflow: any of them might be foreign.
    expect(
      decideExclusivity({ index: index(ownReferences(513)), target: wt1, legacy: marked, unreadable }),
    ).toEqual({
      verdict: 'Unavailable',
      evidence: 'Index',
      reason:
        '2 unreadable reference(s), which might be foreign: SessionReference team-a/odd is malformed: spec.state: Invalid option',
    });
  });

  it('says that an adopted sandbox without marker has no ledger to reconcile with', () => {
    expect(decideExclusivity({ index: EMPTY_INDEX, target: wt1, legacy: { kind: 'NotConfigured' } })).toEqual(
      {
        verdict: 'Unavailable',
        evidence: 'Ledger',
        reason: 'adopted sandbox has no marker and no session ledger is configured to reconcile it',
      },
    );
  });
});

describe('the reason of a reconciliation verdict', () => {
  it('counts the owners of a complete walk', () => {
    expect(reconciled({ kind: 'Complete', stats })).toEqual({
      verdict: 'Exclusive',
      evidence: 'Reconciliation',
      reason: 'legacy walk complete over 3 owner(s); none foreign to worktree wt-1',
    });
    expect(reconciled({ kind: 'Complete', stats }, unrooted).reason).toBe(
      'legacy walk complete over 3 owner(s); none foreign to a sandbox with no worktree',
    );
  });

  it('passes a foreign owner’s reason on, with no reference to name', () => {
    const outcome: ReconciliationOutcome = {
      kind: 'Foreign',
      evidence: 'Reconciliation',
      owner: 'workspace_9',
      reason: 'owner workspace_9 holds the sandbox from worktree wt-2',
      stats,
    };
    expect(reconciled(outcome)).toEqual({
      verdict: 'Foreign',
      evidence: 'Reconciliation',
      blockingReferences: [],
      blockingCount: 1,
      reason: 'owner workspace_9 holds the sandbox from worktree wt-2',
    });
  });

  it('passes the reasons of an incomplete or unavailable walk on', () => {
    expect(
      reconciled({ kind: 'Incomplete', cause: 'Timeout', owner: 'workspace_9', reason: 'timed out', stats }),
    ).toEqual({ verdict: 'Incomplete', evidence: 'Reconciliation', reason: 'timed out' });
    expect(reconciled({ kind: 'Unavailable', owner: undefined, reason: 'history gone', stats })).toEqual({
      verdict: 'Unavailable',
      evidence: 'Reconciliation',
      reason: 'history gone',
    });
  });
});
