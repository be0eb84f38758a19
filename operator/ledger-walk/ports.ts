/**
 * Ports of the legacy reconciliation: the platform's session ledger and its per-session runtime locator.
 * HTTP implementations live in ./adapters; tests script them.
 */

/** The sandbox being decided. */
export type ReconciliationTarget = {
  readonly namespace: string;
  readonly sandbox: string;
  readonly provider: string;
  readonly worktree: string | undefined;
};

/** A runtime allocation the ledger recorded for an owner. */
export type RecordedAllocation = { readonly sandbox: string; readonly provider: string };

/** One owner (a root session) that may reference the sandbox, as the ledger knows it. */
export type LedgerOwner = {
  /** The owner's root session id; located first. */
  readonly session: string;
  /** Every session of the owner (root and delegates); their ids decide the plane, and each is located. */
  readonly sessions: readonly string[];
  readonly worktree: string | undefined;
  readonly allocation: RecordedAllocation | undefined;
};

export type LedgerReport =
  /** Owners in the ledger's order; verdicts are combined in this order. */
  | { readonly kind: 'Owners'; readonly owners: readonly LedgerOwner[] }
  /** The ledger's own "shared" verdict: it blocks this decision but carries no evidence of completeness. */
  | { readonly kind: 'Shared'; readonly reason: string }
  /** The ledger has lost history for this sandbox: nothing can certify it. */
  | { readonly kind: 'HistoryUnavailable'; readonly reason: string };

export interface SessionLedger {
  owners(target: ReconciliationTarget, signal: AbortSignal): Promise<LedgerReport>;
}

export type RuntimeLocation =
  | {
      readonly kind: 'Located';
      readonly sandbox: string;
      readonly provider: string;
      readonly worktree: string | undefined;
    }
  /** The session holds no runtime now (it may have held one: the ledger's recorded allocation says). */
  | { readonly kind: 'NotAllocated' }
  /** Neither the locator nor its history knows the session any more. */
  | { readonly kind: 'HistoryUnavailable'; readonly reason: string };

export interface RuntimeLocator {
  locate(session: string, signal: AbortSignal): Promise<RuntimeLocation>;
}

/** Time, injected so tests drive it. `after` resolves once `ms` have passed, or never if `signal` aborts first. */
export interface Clock {
  now(): number;
  after(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return;
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
      });
    }),
};
