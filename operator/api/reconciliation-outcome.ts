/** What a legacy reconciliation concludes. Only `Complete` earns the marker. */

/** Deferred: a recent walk was not complete and the next one is not due yet. */
export type IncompleteReason = 'Timeout' | 'BudgetExhausted' | 'LookupFailed' | 'LedgerFailed' | 'Deferred';

export type ReconciliationStats = {
  readonly owners: number;
  /** Locator lookups made: one per session of each owner that is looked up. */
  readonly lookedUp: number;
  readonly skippedLegacy: number;
  readonly timedOut: number;
  readonly failed: number;
  readonly elapsedMs: number;
};

export type ReconciliationOutcome =
  /** Every owner accounted for, none foreign, no history missing. */
  | { readonly kind: 'Complete'; readonly stats: ReconciliationStats }
  | {
      readonly kind: 'Foreign';
      /** Ledger: the ledger's own verdict or a recorded allocation; Reconciliation: a locator lookup. */
      readonly evidence: 'Ledger' | 'Reconciliation';
      readonly owner: string | undefined;
      readonly reason: string;
      readonly stats: ReconciliationStats;
    }
  | {
      readonly kind: 'Incomplete';
      readonly cause: IncompleteReason;
      readonly owner: string | undefined;
      readonly reason: string;
      readonly stats: ReconciliationStats;
    }
  | {
      readonly kind: 'Unavailable';
      readonly owner: string | undefined;
      readonly reason: string;
      readonly stats: ReconciliationStats;
    };

/** Only a complete walk, with no foreign reference and no history missing, earns the marker (docs/legacy-reconciliation.md). */
export function earnsMarker(
  outcome: ReconciliationOutcome,
): outcome is Extract<ReconciliationOutcome, { readonly kind: 'Complete' }> {
  return outcome.kind === 'Complete';
}
