/** The reaper's dependencies and options, and what it answers (the endpoint maps each answer to HTTP). */
import type { Logger } from 'pino';
import type { JournalEntry } from './ledger/journal-entries.ts';
import type { JournaledOutbox } from './notices/notice-outbox.ts';
import type { OutputTail } from './os/output-tail.ts';
import type { Clock, Journal, ProcessTable, Signaller } from './os/ports.ts';
import type { RetireLimits } from './retire/retire-plan.ts';
import type { KeepReason, TurnEndDecision } from './turns/turn-decision.ts';
import type { RetireReporter } from './kube/ports.ts';

export interface ReaperOptions extends RetireLimits {
  /** How long an exit notice is held before the host may read it. */
  readonly noticeHoldMs: number;
  /** Interval of the exit/match monitor; 0 turns the loop off (tests tick it by hand). */
  readonly pollMs: number;
}

export interface ReaperDeps {
  readonly table: ProcessTable;
  readonly signaller: Signaller;
  readonly journal: Journal<JournalEntry>;
  readonly outbox: JournaledOutbox;
  readonly clock: Clock;
  readonly reporter: RetireReporter;
  readonly logger: Logger;
  readonly options: ReaperOptions;
  readonly tail?: OutputTail;
}

export type RegisterOutcome =
  | { readonly kind: 'Registered' | 'AlreadyRegistered'; readonly shell: string }
  /** The turn had ended: the shell joined that turn's retire (answered 409 TurnEnded). */
  | { readonly kind: 'Included'; readonly shell: string; readonly retire: string }
  | {
      readonly kind: 'Refused';
      readonly code: 'IdentityMismatch' | 'ShellConflict' | 'ProtectedProcess';
      readonly reason: string;
    };

export type EndTurnOutcome =
  | { readonly kind: 'Retiring'; readonly retire: string; readonly groups: number }
  | { readonly kind: 'Kept'; readonly reason: KeepReason }
  | { readonly kind: 'Duplicate'; readonly decision: TurnEndDecision; readonly finished: boolean };
