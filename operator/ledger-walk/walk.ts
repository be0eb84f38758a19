/**
 * The bounded legacy walk (docs/legacy-reconciliation.md): for a sandbox older than the reference index, ask the ledger which
 * owners may reference it, then look up the owners that could be control-plane through the runtime locator.
 *
 * Guarantees:
 * - One budget (default 20 s) covers the ledger call and every lookup; each call is capped (default 5 s)
 *   and at most `concurrency` (default 8) lookups run at once.
 * - Verdicts are combined in the ledger's owner order, whatever order lookups finish in: the outcome is
 *   decided by the first owner, in order, whose verdict is not Clear. Lookups past that owner are aborted.
 * - Expected failures are values: a timeout or an exhausted budget is `Incomplete`, missing history is
 *   `Unavailable`, never an exception and never Clear. A located owner naming another sandbox (an identity
 *   mismatch) is Clear, never a timeout.
 * - Legacy owners are not looked up; they block only through a recorded allocation naming the target.
 */
import pLimit from 'p-limit';
import type { ReconciliationOutcome, ReconciliationStats } from '../api/reconciliation-outcome.ts';
import { controlPlaneOwner, legacyOwnerVerdict, type OwnerVerdict, type PlaneRule } from './owner-verdict.ts';
import { lookupOwner } from './lookup.ts';
import type { Clock, ReconciliationTarget, RuntimeLocator, SessionLedger } from './ports.ts';
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

  // A verdict recorded after the outcome cannot change it: the promise settles once, its stats are a copy.
  const record = (position: number, verdict: OwnerVerdict) => {
    if (verdict.kind === 'Incomplete') {
      if (verdict.cause === 'Timeout') counters.timedOut += 1;
      else counters.failed += 1;
    }
    verdicts[position] = verdict;
    const outcome = combineInOwnerOrder(verdicts, () => stats(owners.length));
    if (outcome) {
      walk.abort();
      settle(outcome);
    }
  };

  owners.forEach((owner, position) => {
    if (!planeRule(owner)) {
      counters.skippedLegacy += 1;
      record(position, legacyOwnerVerdict(owner, target));
      return;
    }
    void limit(async () => {
      if (walk.signal.aborted) return;
      const remaining = deadline - clock.now();
      if (remaining <= 0) {
        record(position, {
          kind: 'Incomplete',
          owner: owner.session,
          cause: 'BudgetExhausted',
          reason: `budget of ${limits.budgetMs} ms spent before ${owner.session} was looked up`,
        });
        return;
      }
      counters.lookedUp += 1;
      const verdict = await lookupOwner(
        input.locator,
        owner,
        target,
        clock,
        Math.min(limits.perCallMs, remaining),
        walk.signal,
      );
      if (verdict) record(position, verdict);
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
