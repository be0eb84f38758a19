/**
 * The ports of the Kubernetes side. `RetireReporter`: where a finished (or failed) retire is recorded
 * besides the log, the SessionReference's status and an Event; its adapter sits beside it
 * (status-reporter.ts, joined to the watch by reference-reporter.ts), and without a cluster the app logs
 * instead (sidecar-app.ts). `TurnEndReceiver`: where the SessionReference watch sends the turn ends it sees.
 */
import type { Role } from '../../../api/session-reference.ts';
import type { EndTurnRequest } from '../../contract/requests.ts';
import type { RetireSummary } from '../ledger/retire-targets.ts';

/**
 * The reaper (reaper.ts), as the watch sees it. Assumes each call takes its place in the reaper's order
 * when it is made (both queue on its lock before their first await): so turns a full history settles are
 * settled before that status's own turn ends, which can then retire their shells. Repeats are idempotent.
 */
export interface TurnEndReceiver {
  endTurn(request: EndTurnRequest): Promise<unknown>;
  /** Keeps a subagent's shell-bearing turns that a full history no longer shows (turns/turn-history.ts). */
  settleUnshownTurns(session: string, role: Role, shown: ReadonlySet<string>): Promise<unknown>;
}

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
