/**
 * The exclusivity decision: may deleting this sandbox's worktree destroy the sandbox?
 *
 * Precedence, each step failing closed:
 * 0. A reference that cannot be read answers Unavailable: it might be foreign.
 * 1. An overflowed index answers Overflowed (never exclusive until erased).
 * 2. A reference foreign to the target worktree answers Foreign, from the Index.
 * 3. Without the marker, the legacy evidence decides: the reconciliation's outcome (Foreign, Incomplete,
 *    Unavailable, or Complete ⇒ Exclusive with Reconciliation evidence), or Unavailable when no ledger is
 *    configured to reconcile with.
 * 4. Otherwise Exclusive, from the Index.
 * An Exclusive answer from a cached index still needs a fresh, consistent LIST before anything is
 * released (the controller's job: it calls this again on the live index).
 */
import type { MalformedObjectError } from '../api/parse.ts';
import type { Evidence } from '../api/sandbox.ts';
import { BLOCKING_REFERENCES_MAX } from '../api/limits.ts';
import type { ReconciliationOutcome } from '../api/reconciliation-outcome.ts';
import { foreignReferences, hasForeignReference, type ExclusivityTarget } from './foreign.ts';
import type { CapacityLatch, ReferenceIndex } from './reference-index.ts';

/** What the sandbox's history says beyond the index. */
export type LegacyEvidence =
  /** The marker is set: the index alone decides. */
  | { readonly kind: 'Marked' }
  /** A legacy reconciliation just ran. */
  | { readonly kind: 'Reconciled'; readonly outcome: ReconciliationOutcome }
  /** Adopted without a marker and no ledger to reconcile with. */
  | { readonly kind: 'NotConfigured' };

/**
 * Whether the sandbox's history is known: the marker, or a legacy walk that completed. Only then can the
 * decision be Exclusive (step 3 below); a sandbox of unknown history keeps every reference, even its own
 * worktree's tombstones, since nothing the index says can release it.
 */
export function historyKnown(legacy: LegacyEvidence): boolean {
  return legacy.kind === 'Marked' || (legacy.kind === 'Reconciled' && legacy.outcome.kind === 'Complete');
}

export type Verdict =
  | { readonly verdict: 'Exclusive'; readonly evidence: Evidence; readonly reason: string }
  | {
      readonly verdict: 'Foreign';
      readonly evidence: Evidence;
      readonly blockingReferences: readonly string[];
      readonly blockingCount: number;
      readonly reason: string;
    }
  | { readonly verdict: 'Incomplete'; readonly evidence: 'Reconciliation'; readonly reason: string }
  | {
      readonly verdict: 'Unavailable';
      readonly evidence: 'Index' | 'Ledger' | 'Reconciliation';
      readonly reason: string;
    }
  | {
      readonly verdict: 'Overflowed';
      readonly evidence: 'Index';
      readonly latch: CapacityLatch;
      readonly reason: string;
    };

export type ExclusivityInput = {
  readonly index: ReferenceIndex;
  readonly target: ExclusivityTarget;
  readonly legacy: LegacyEvidence;
  /** References of this sandbox that could not be parsed: any of them might be foreign. */
  readonly unreadable?: readonly MalformedObjectError[];
};

const describeTarget = (target: ExclusivityTarget) =>
  target.worktree === undefined ? 'a sandbox with no worktree' : `worktree ${target.worktree}`;

export function decideExclusivity({ index, target, legacy, unreadable = [] }: ExclusivityInput): Verdict {
  const [firstUnreadable] = unreadable;
  if (firstUnreadable) {
    return {
      verdict: 'Unavailable',
      evidence: 'Index',
      reason: `${unreadable.length} unreadable reference(s), which might be foreign: ${firstUnreadable.message}`,
    };
  }
  if (index.overflowed) {
    const { latch } = index;
    return {
      verdict: 'Overflowed',
      evidence: 'Index',
      latch,
      reason: `reference index over capacity (${latch.limit}: ${latch.observed} > ${latch.max}); erase the index to release`,
    };
  }
  if (hasForeignReference(index, target)) {
    const foreign = foreignReferences(index, target);
    const first = foreign[0];
    return {
      verdict: 'Foreign',
      evidence: 'Index',
      blockingReferences: foreign.slice(0, BLOCKING_REFERENCES_MAX).map((entry) => entry.name),
      blockingCount: foreign.length,
      reason:
        `${foreign.length} reference(s) foreign to ${describeTarget(target)}` +
        (first
          ? `, first ${first.name} (session ${first.session}, ${first.state}, ${first.worktree === undefined ? 'no worktree' : `worktree ${first.worktree}`})`
          : ''),
    };
  }
  switch (legacy.kind) {
    case 'Marked':
      return {
        verdict: 'Exclusive',
        evidence: 'Index',
        reason: `no reference foreign to ${describeTarget(target)}`,
      };
    case 'NotConfigured':
      return {
        verdict: 'Unavailable',
        evidence: 'Ledger',
        reason: 'adopted sandbox has no marker and no session ledger is configured to reconcile it',
      };
    case 'Reconciled':
      return fromReconciliation(legacy.outcome, target);
  }
}

function fromReconciliation(outcome: ReconciliationOutcome, target: ExclusivityTarget): Verdict {
  switch (outcome.kind) {
    case 'Complete':
      return {
        verdict: 'Exclusive',
        evidence: 'Reconciliation',
        reason: `legacy walk complete over ${outcome.stats.owners} owner(s); none foreign to ${describeTarget(target)}`,
      };
    case 'Foreign':
      return {
        verdict: 'Foreign',
        evidence: outcome.evidence,
        blockingReferences: [],
        blockingCount: 1,
        reason: outcome.reason,
      };
    case 'Incomplete':
      return { verdict: 'Incomplete', evidence: 'Reconciliation', reason: outcome.reason };
    case 'Unavailable':
      return { verdict: 'Unavailable', evidence: 'Reconciliation', reason: outcome.reason };
  }
}
