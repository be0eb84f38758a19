/**
 * Where a finished (or failed) retire is recorded besides the log: the SessionReference's status and an
 * Event. Its adapter sits beside it (status-reporter.ts, joined to the watch by reference-reporter.ts);
 * without a cluster the app logs instead (sidecar-app.ts).
 */
import type { RetireSummary } from '../ledger/retire-targets.ts';

export interface RetireReporter {
  reportRetired(report: RetireReport): Promise<void>;
  reportFailure(failure: RetireFailure): Promise<void>;
}

export interface RetireReport {
  readonly session: string;
  readonly turn: string;
  readonly summary: RetireSummary;
  readonly finishedAt: string;
}

export interface RetireFailure {
  readonly session: string;
  readonly turn: string;
  readonly message: string;
}
