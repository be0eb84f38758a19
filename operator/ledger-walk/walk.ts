/**
 * The bounded legacy walk (docs/legacy-reconciliation.md): for a sandbox older than the reference index, ask the ledger which
 * owners may reference it, then locate every session of the owners that could be control-plane through the runtime locator.
 *
 * Guarantees:
 * - One budget (default 20 s) covers the ledger call and every lookup; each call is capped (default 5 s)
 *   and at most `concurrency` (default 8) lookups run at once, whichever owners their sessions belong to.
 * - Verdicts are combined in the ledger's owner order, and an owner's sessions in the ledger's session order,
 *   whatever order lookups finish in: the outcome is decided by the first owner, in order, whose verdict is
 *   not Clear. Lookups past that owner are aborted; an owner's lookups not yet started when its verdict is
 *   known never start.
 * - Expected failures are values: a timeout or an exhausted budget is `Incomplete`, missing history is
 *   `Unavailable`, never an exception and never Clear. A located session naming another sandbox (an identity
 *   mismatch) is Clear, never a timeout.
 * - A recorded allocation of the target from another (or no) worktree is Foreign without a lookup; legacy
 *   owners are not looked up and block only that way.
 */
import pLimit from 'p-limit';
import type { ReconciliationOutcome, ReconciliationStats } from '../api/reconciliation-outcome.ts';
import {
  controlPlaneOwner,
  legacyOwnerVerdict,
  ownerVerdict,
  recordedAllocationVerdict,
  sessionOfOwner,
  sessionsToLocate,
  type OwnerVerdict,
  type PlaneRule,
  type SessionFinding,
} from './owner-verdict.ts';
import { lookupSession } from './lookup.ts';
import type { Clock, LedgerOwner, ReconciliationTarget, RuntimeLocator, SessionLedger } from './ports.ts';
import { callLedger, type LedgerCall } from './ledger-call.ts';

export type ReconcileLimits = {
  readonly budgetMs: number;
  readonly perCallMs: number;
  readonly concurrency: number;
};
export const DEFAULT_RECONCILE_LIMITS: ReconcileLimits = {
  budgetMs: 20_000,
  perCallMs: 5_000,
  concurrency: 8,
};

export type ReconcileInput = {
  readonly target: ReconciliationTarget;
  readonly ledger: SessionLedger;
  readonly locator: RuntimeLocator;
  readonly clock: Clock;
  readonly limits?: ReconcileLimits;
  readonly planeRule?: PlaneRule;
};

type Counters = { lookedUp: number; skippedLegacy: number; timedOut: number; failed: number };

export async function reconcileSandboxReferences(input: ReconcileInput): Promise<ReconciliationOutcome> {
  const { target, clock } = input;
  const limits = input.limits ?? DEFAULT_RECONCILE_LIMITS;
  const planeRule = input.planeRule ?? controlPlaneOwner;
  const started = clock.now();
  const deadline = started + limits.budgetMs;
  const counters: Counters = { lookedUp: 0, skippedLegacy: 0, timedOut: 0, failed: 0 };
  const stats = (owners: number): ReconciliationStats => ({
    owners,
    ...counters,
    elapsedMs: clock.now() - started,
  });

  const report = await callLedger(input.ledger, target, clock, Math.min(limits.perCallMs, limits.budgetMs));
  if (report.kind !== 'Owners') return ledgerOutcome(report, counters, () => stats(0));

  const owners = report.owners;
  if (owners.length === 0) return { kind: 'Complete', stats: stats(0) };
  const verdicts: (OwnerVerdict | undefined)[] = owners.map(() => undefined);
  const walk = new AbortController();
  const limit = pLimit(limits.concurrency);
  let settle: (outcome: ReconciliationOutcome) => void = () => undefined;
  const decided = new Promise<ReconciliationOutcome>((resolve) => (settle = resolve));

  // An owner's slot holds its verdict so far: undefined until its sessions decide it, then fixed, since the
  // sessions up to the deciding one are known (a lookup under way then records the same verdict again).
  // A verdict recorded after the outcome cannot change it: the promise settles once, its stats are a copy.
  const record = (position: number, verdict: OwnerVerdict | undefined) => {
    verdicts[position] = verdict;
    const outcome = combineInOwnerOrder(verdicts, () => stats(owners.length));
    if (outcome) {
      walk.abort();
      settle(outcome);
    }
  };

  const locate = async (owner: LedgerOwner, session: string): Promise<SessionFinding | undefined> => {
    const remaining = deadline - clock.now();
    if (remaining <= 0)
      return {
        kind: 'Incomplete',
        owner: owner.session,
        cause: 'BudgetExhausted',
        reason: `budget of ${limits.budgetMs} ms spent before ${sessionOfOwner(owner, session)} was looked up`,
      };
    counters.lookedUp += 1;
    const cap = Math.min(limits.perCallMs, remaining);
    return lookupSession(input.locator, owner, session, target, clock, cap, walk.signal);
  };

  owners.forEach((owner, position) => {
    if (!planeRule(owner)) {
      counters.skippedLegacy += 1;
      record(position, legacyOwnerVerdict(owner, target));
      return;
    }
    const recorded = recordedAllocationVerdict(owner, target, 'owner');
    if (recorded) {
      record(position, recorded);
      return;
    }
    const sessions = sessionsToLocate(owner);
    const findings: (SessionFinding | undefined)[] = sessions.map(() => undefined);
    sessions.forEach((session, index) => {
      void limit(async () => {
        // Once the walk or this owner is decided, a lookup not yet started would change nothing. One under
        // way runs to its cap: aborting it would rely on the locator honouring its signal to free the slot.
        if (walk.signal.aborted || verdicts[position]) return;
        const finding = await locate(owner, session);
        if (!finding) return;
        if (finding.kind === 'Incomplete') {
          if (finding.cause === 'Timeout') counters.timedOut += 1;
          else counters.failed += 1;
        }
        findings[index] = finding;
        record(position, ownerVerdict(owner, findings));
      });
    });
  });
  return decided;
}

/** The ledger decided alone: its call failed, it shared the sandbox, or it has no history. */
function ledgerOutcome(
  report: Exclude<LedgerCall, { readonly kind: 'Owners' }>,
  counters: Counters,
  stats: () => ReconciliationStats,
): ReconciliationOutcome {
  switch (report.kind) {
    case 'Incomplete':
      if (report.cause === 'Timeout') counters.timedOut += 1;
      else counters.failed += 1;
      return {
        kind: 'Incomplete',
        cause: report.cause,
        owner: undefined,
        reason: report.reason,
        stats: stats(),
      };
    case 'Shared':
      return {
        kind: 'Foreign',
        evidence: 'Ledger',
        owner: undefined,
        reason: `ledger verdict shared: ${report.reason}`,
        stats: stats(),
      };
    case 'HistoryUnavailable':
      return {
        kind: 'Unavailable',
        owner: undefined,
        reason: `ledger history unavailable: ${report.reason}`,
        stats: stats(),
      };
  }
}

/** The first owner in order whose verdict is not Clear decides, as it is; all Clear is Complete; else undecided. */
function combineInOwnerOrder(
  verdicts: readonly (OwnerVerdict | undefined)[],
  stats: () => ReconciliationStats,
): ReconciliationOutcome | undefined {
  for (const verdict of verdicts) {
    if (verdict === undefined) return undefined;
    if (verdict.kind !== 'Clear') return { ...verdict, stats: stats() };
  }
  return { kind: 'Complete', stats: stats() };
}
