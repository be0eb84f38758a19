/**
 * Per-owner verdicts of the legacy walk, and the plane rule that decides which owners are looked up.
 */
import { isForeignReference } from '../exclusivity/foreign.ts';
import type { IncompleteReason } from '../api/reconciliation-outcome.ts';
import type { LedgerOwner, ReconciliationTarget, RuntimeLocation } from './ports.ts';

export type OwnerVerdict =
  | { readonly kind: 'Clear'; readonly owner: string }
  | {
      readonly kind: 'Foreign';
      readonly owner: string;
      readonly evidence: 'Ledger' | 'Reconciliation';
      readonly reason: string;
    }
  | { readonly kind: 'Unavailable'; readonly owner: string; readonly reason: string }
  | {
      readonly kind: 'Incomplete';
      readonly owner: string;
      readonly cause: IncompleteReason;
      readonly reason: string;
    };

/** Decides whether an owner could hold a control-plane sandbox id; only those are looked up. */
export type PlaneRule = (owner: LedgerOwner) => boolean;

/**
 * Default plane rule (docs/legacy-reconciliation.md, "Who is looked up"): legacy session ids cannot hold a control-plane sandbox id, so an owner
 * is looked up only when it has a worktree or any `workspace_` session.
 */
export const controlPlaneOwner: PlaneRule = (owner) =>
  owner.worktree !== undefined ||
  [owner.session, ...owner.sessions].some((id) => id.startsWith('workspace_'));

const namesTarget = (target: ReconciliationTarget, sandbox: string, provider: string) =>
  sandbox === target.sandbox && provider === target.provider;

/** A legacy owner is not looked up: it blocks only when its recorded allocation names the target. */
export function legacyOwnerVerdict(owner: LedgerOwner, target: ReconciliationTarget): OwnerVerdict {
  const allocation = owner.allocation;
  if (allocation && namesTarget(target, allocation.sandbox, allocation.provider)) {
    if (isForeignReference({ worktree: owner.worktree }, target)) {
      return {
        kind: 'Foreign',
        owner: owner.session,
        evidence: 'Ledger',
        reason: `legacy owner ${owner.session} has a recorded allocation of ${allocation.provider}/${allocation.sandbox}`,
      };
    }
  }
  return { kind: 'Clear', owner: owner.session };
}

/** A located owner is foreign when it holds the target sandbox from another (or no) worktree. */
export function lookupVerdict(
  owner: LedgerOwner,
  location: RuntimeLocation,
  target: ReconciliationTarget,
): OwnerVerdict {
  switch (location.kind) {
    case 'NotAllocated':
      return { kind: 'Clear', owner: owner.session };
    case 'HistoryUnavailable':
      return {
        kind: 'Unavailable',
        owner: owner.session,
        reason: `history of ${owner.session} is unavailable: ${location.reason}`,
      };
    case 'Located': {
      // A location naming another sandbox is an identity mismatch: the owner does not hold this one.
      if (!namesTarget(target, location.sandbox, location.provider))
        return { kind: 'Clear', owner: owner.session };
      const worktree = location.worktree ?? owner.worktree;
      if (!isForeignReference({ worktree }, target)) return { kind: 'Clear', owner: owner.session };
      return {
        kind: 'Foreign',
        owner: owner.session,
        evidence: 'Reconciliation',
        reason: `owner ${owner.session} holds the sandbox from ${worktree === undefined ? 'no worktree' : `worktree ${worktree}`}`,
      };
    }
  }
}
