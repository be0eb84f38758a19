/**
 * What the ledger records of a retire: each target (a shell group or an escapee), the state it reached and
 * the identities proven ours, and the summary of a finished retire. Journaled, so a restart resumes from
 * them; retire/retire-plan.ts is the state machine that advances them (its module doc describes each
 * state). They live here, below the retire, so the journal and the ledger import nothing above them.
 */
import type { ProcessIdentity } from '../../contract/proc-stat.ts';
import type { Escapee, ShellGroup } from './shell-group.ts';

export type RetireTarget =
  | { readonly kind: 'Group'; readonly group: ShellGroup }
  | { readonly kind: 'Escapee'; readonly escapee: Escapee };

export type DoneHow = 'AlreadyGone' | 'Exited' | 'Killed' | 'Recycled';
export type UnreachableReason = 'Refused' | 'Protected' | 'Unproven' | 'Survived';

export type RetireState =
  | { readonly kind: 'Fenced' }
  | { readonly kind: 'NoticesDropped' }
  | {
      readonly kind: 'Terminating';
      readonly signalledAt: number;
      readonly witnesses: readonly ProcessIdentity[];
    }
  | {
      readonly kind: 'Continuing';
      readonly signalledAt: number;
      readonly witnesses: readonly ProcessIdentity[];
    }
  | {
      readonly kind: 'Killing';
      readonly signalledAt: number;
      readonly killedAt: number;
      readonly witnesses: readonly ProcessIdentity[];
    }
  | { readonly kind: 'Done'; readonly how: DoneHow; readonly detail?: string }
  | {
      readonly kind: 'Unreachable';
      readonly reason: UnreachableReason;
      readonly pids: readonly number[];
      readonly detail: string;
    };

export interface TargetProgress {
  readonly id: string;
  readonly target: RetireTarget;
  readonly state: RetireState;
  /** Identity keys proven ours (continuity proof for the next survey). */
  readonly known: readonly string[];
}

export type TerminalState = Extract<RetireState, { readonly kind: 'Done' | 'Unreachable' }>;

export function isTerminal(state: RetireState): state is TerminalState {
  return state.kind === 'Done' || state.kind === 'Unreachable';
}

/** A finished retire, as journaled and reported (status.shells, the Event). */
export interface RetireSummary {
  readonly retiredGroups: number;
  /** Groups that needed SIGKILL. */
  readonly killedGroups: number;
  readonly escapees: number;
  /** Processes found but not ended: permission, protected, unprovable, or outliving SIGKILL. */
  readonly unreachable: number;
  readonly unreachablePids: readonly number[];
  readonly message: string;
}
