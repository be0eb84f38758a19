import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS, MalformedObjectError } from '../../../operator/api/index.ts';
import {
  buildReferenceIndex,
  decideExclusivity,
  EMPTY_INDEX,
  historyKnown,
  type LegacyEvidence,
} from '../../../operator/exclusivity/index.ts';
import type { ReconciliationOutcome } from '../../../operator/ledger-walk/index.ts';
import { attached, ownReferences, tombstone } from '../fixtures.ts';

const marked: LegacyEvidence = { kind: 'Marked' };
const target = { worktree: 'wt-1' };
const stats = { owners: 3, lookedUp: 1, skippedLegacy: 2, timedOut: 0, failed: 0, elapsedMs: 10 };
const index = (...entries: Parameters<typeof buildReferenceIndex>[0][]) =>
  buildReferenceIndex(entries.flat() as never, INDEX_LIMITS);

describe('decideExclusivity', () => {
  it('keeps the sandbox when a foreign session is attached', () => {
    const verdict = decideExclusivity({
      index: index([attached('own', 'wt-1'), attached('other', 'wt-2')]),
      target,
      legacy: marked,
    });
    expect(verdict).toMatchObject({
      verdict: 'Foreign',
      evidence: 'Index',
      blockingReferences: ['other'],
      blockingCount: 1,
    });
  });

  it('keeps the sandbox when a foreign session is detached (a tombstone)', () => {
    const verdict = decideExclusivity({ index: index([tombstone('gone', 'wt-2')]), target, legacy: marked });
    expect(verdict).toMatchObject({ verdict: 'Foreign', evidence: 'Index', blockingReferences: ['gone'] });
  });

  it('destroys the sandbox when no reference is foreign', () => {
    const verdict = decideExclusivity({
      index: index([attached('a', 'wt-1'), tombstone('b', 'wt-1')]),
      target,
      legacy: marked,
    });
    expect(verdict).toMatchObject({ verdict: 'Exclusive', evidence: 'Index' });
  });

  it('destroys an unreferenced sandbox with the marker', () => {
    expect(decideExclusivity({ index: EMPTY_INDEX, target, legacy: marked }).verdict).toBe('Exclusive');
  });

  it('treats a session with no worktree as foreign', () => {
    const verdict = decideExclusivity({
      index: index([attached('legacy', undefined)]),
      target,
      legacy: marked,
    });
    expect(verdict.verdict).toBe('Foreign');
  });

  it('treats every reference as foreign to a sandbox with no worktree', () => {
    const verdict = decideExclusivity({
      index: index([attached('a', 'wt-1')]),
      target: { worktree: undefined },
      legacy: marked,
    });
    expect(verdict.verdict).toBe('Foreign');
  });

  it('names at most 16 blocking references but counts them all', () => {
    const foreign = Array.from({ length: 40 }, (_, i) => attached(`f-${String(i).padStart(2, '0')}`, 'wt-9'));
    const verdict = decideExclusivity({ index: index(foreign), target, legacy: marked });
    expect(verdict).toMatchObject({ verdict: 'Foreign', blockingCount: 40 });
    expect(verdict.verdict === 'Foreign' && verdict.blockingReferences).toHaveLength(16);
  });

  it('answers Overflowed for an overflowed index even when no reference is foreign', () => {
    const verdict = decideExclusivity({ index: index(ownReferences(513)), target, legacy: marked });
    expect(verdict).toMatchObject({
      verdict: 'Overflowed',
      evidence: 'Index',
      latch: { limit: 'References', observed: 513, max: 512 },
    });
  });

  it('keeps the sandbox when a reference cannot be read, even with an otherwise exclusive index', () => {
    const unreadable = [
      new MalformedObjectError('SessionReference', 'ns/odd', 'spec.state', 'Invalid option'),
    ];
    const verdict = decideExclusivity({
      index: index([attached('a', 'wt-1')]),
      target,
      legacy: marked,
      unreadable,
    });
    expect(verdict).toMatchObject({
      verdict: 'Unavailable',
      evidence: 'Index',
      reason: expect.stringContaining('spec.state'),
    });
  });

  it('fails closed for an adopted sandbox when no ledger is configured', () => {
    const verdict = decideExclusivity({ index: EMPTY_INDEX, target, legacy: { kind: 'NotConfigured' } });
    expect(verdict).toMatchObject({ verdict: 'Unavailable', evidence: 'Ledger' });
  });

  it('lets an index hit decide before any legacy evidence is needed', () => {
    const verdict = decideExclusivity({
      index: index([attached('x', 'wt-2')]),
      target,
      legacy: { kind: 'NotConfigured' },
    });
    expect(verdict).toMatchObject({ verdict: 'Foreign', evidence: 'Index' });
  });

  it.each<[ReconciliationOutcome, string, string]>([
    [{ kind: 'Complete', stats }, 'Exclusive', 'Reconciliation'],
    [
      { kind: 'Foreign', evidence: 'Ledger', owner: undefined, reason: 'ledger verdict shared', stats },
      'Foreign',
      'Ledger',
    ],
    [
      { kind: 'Foreign', evidence: 'Reconciliation', owner: 'workspace_9', reason: 'held', stats },
      'Foreign',
      'Reconciliation',
    ],
    [
      { kind: 'Incomplete', cause: 'Timeout', owner: 'workspace_9', reason: 'timed out', stats },
      'Incomplete',
      'Reconciliation',
    ],
    [
      { kind: 'Unavailable', owner: 'workspace_9', reason: 'history gone', stats },
      'Unavailable',
      'Reconciliation',
    ],
  ])('maps a reconciliation outcome %# to its verdict', (outcome, verdict, evidence) => {
    expect(
      decideExclusivity({ index: EMPTY_INDEX, target, legacy: { kind: 'Reconciled', outcome } }),
    ).toMatchObject({ verdict, evidence });
  });
});

describe('historyKnown', () => {
  it('is true exactly for the legacy evidence that lets a sandbox with no reference be Exclusive', () => {
    const outcomes: ReconciliationOutcome[] = [
      { kind: 'Complete', stats },
      { kind: 'Foreign', evidence: 'Reconciliation', owner: undefined, reason: 'r', stats },
      { kind: 'Incomplete', cause: 'Deferred', owner: undefined, reason: 'r', stats },
      { kind: 'Unavailable', owner: undefined, reason: 'r', stats },
    ];
    const every: LegacyEvidence[] = [
      marked,
      { kind: 'NotConfigured' },
      ...outcomes.map((outcome) => ({ kind: 'Reconciled' as const, outcome })),
    ];
    for (const legacy of every) {
      const verdict = decideExclusivity({ index: EMPTY_INDEX, target, legacy }).verdict;
      expect(historyKnown(legacy), `${legacy.kind} -> ${verdict}`).toBe(verdict === 'Exclusive');
    }
  });
});
