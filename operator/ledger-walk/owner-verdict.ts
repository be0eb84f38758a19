/**
 * Per-owner verdicts of the legacy walk, the plane rule that decides which owners are looked up, and how
 * the lookups of an owner's sessions add up to its verdict (docs/legacy-reconciliation.md, "An owner's
 * verdict").
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
  owner.worktree !== undefined || sessionsToLocate(owner).some((id) => id.startsWith('workspace_'));

/** The root first, then the owner's other sessions in the ledger's order, each once. */
export const sessionsToLocate = (owner: LedgerOwner): readonly string[] => [
  ...new Set([owner.session, ...owner.sessions]),
];

const namesTarget = (target: ReconciliationTarget, sandbox: string, provider: string) =>
  sandbox === target.sandbox && provider === target.provider;

/**
 * A recorded allocation of the target from another (or no) worktree is foreign, whatever the locator says
 * now: a session that left the sandbox is a tombstone, and tombstones block (issue 25 item 3).
 */
export function recordedAllocationVerdict(
  owner: LedgerOwner,
  target: ReconciliationTarget,
  who: 'owner' | 'legacy owner',
): OwnerVerdict | undefined {
  const allocation = owner.allocation;
  if (!allocation || !namesTarget(target, allocation.sandbox, allocation.provider)) return undefined;
  if (!isForeignReference({ worktree: owner.worktree }, target)) return undefined;
  return {
    kind: 'Foreign',
    owner: owner.session,
    evidence: 'Ledger',
    reason: `${who} ${owner.session} has a recorded allocation of ${allocation.provider}/${allocation.sandbox}`,
  };
}

/** A legacy owner is not looked up: it blocks only when its recorded allocation names the target. */
export function legacyOwnerVerdict(owner: LedgerOwner, target: ReconciliationTarget): OwnerVerdict {
  return recordedAllocationVerdict(owner, target, 'legacy owner') ?? { kind: 'Clear', owner: owner.session };
}

/** What the lookup of one session of an owner found: a verdict that blocks the owner, or a clear session. */
export type SessionFinding =
  /** `located`: the locator placed the session in a sandbox, so the owner's history is known. */
  { readonly kind: 'Clear'; readonly located: boolean } | Exclude<OwnerVerdict, { readonly kind: 'Clear' }>;

/** The session as reasons name it: the root by itself, a delegate with its owner. */
export const sessionOfOwner = (owner: LedgerOwner, session: string): string =>
  session === owner.session ? session : `${session} (owner ${owner.session})`;

/** A session located in the target is foreign when it holds it from another (or no) worktree. */
export function sessionFinding(
  owner: LedgerOwner,
  session: string,
  location: RuntimeLocation,
  target: ReconciliationTarget,
): SessionFinding {
  switch (location.kind) {
    case 'NotAllocated':
      return { kind: 'Clear', located: false };
    case 'HistoryUnavailable':
      return {
        kind: 'Unavailable',
        owner: owner.session,
        reason: `history of ${sessionOfOwner(owner, session)} is unavailable: ${location.reason}`,
      };
    case 'Located': {
      // A location naming another sandbox is an identity mismatch: the session does not hold this one.
      if (!namesTarget(target, location.sandbox, location.provider)) return { kind: 'Clear', located: true };
      const worktree = location.worktree ?? owner.worktree;
      if (!isForeignReference({ worktree }, target)) return { kind: 'Clear', located: true };
      const through = session === owner.session ? '' : ` through session ${session}`;
      return {
        kind: 'Foreign',
        owner: owner.session,
        evidence: 'Reconciliation',
        reason: `owner ${owner.session} holds the sandbox${through} from ${worktree === undefined ? 'no worktree' : `worktree ${worktree}`}`,
      };
    }
  }
}

/**
 * An owner's verdict from its sessions' findings, in session order: the first that is not Clear decides.
 * All Clear is Clear only when some session was located or the ledger recorded an allocation: an owner
 * whose locator and ledger evidence are both gone may have left this sandbox without a trace, so its
 * history is unavailable (seed 000) and it blocks. Undefined while a session before the deciding one is
 * still unknown.
 */
export function ownerVerdict(
  owner: LedgerOwner,
  findings: readonly (SessionFinding | undefined)[],
): OwnerVerdict | undefined {
  let located = false;
  for (const finding of findings) {
    if (finding === undefined) return undefined;
    if (finding.kind !== 'Clear') return finding;
    located ||= finding.located;
  }
  if (located || owner.allocation) return { kind: 'Clear', owner: owner.session };
  return {
    kind: 'Unavailable',
    owner: owner.session,
    reason: `no session of owner ${owner.session} is allocated and the ledger recorded no allocation for it`,
  };
}
