/**
 * Which turn ends retire shells (docs/sidecar.md, "Turn ends"): only a *completed* turn of a *subagent* session. Failed
 * and interrupted turns keep their shells (the next completed turn retires them); root, board and ticket
 * sessions' shells are never touched. Pure.
 */
import type { Role, TurnPhase } from '../../../api/session-reference.ts';

export type EndedPhase = Exclude<TurnPhase, 'Running'>;

export const KEEP_REASONS = {
  NotSubagent: 'only a subagent session retires its shells at turn end',
  TurnFailed: 'a failed turn keeps its shells; the next completed turn retires them',
  TurnInterrupted: 'an interrupted turn keeps its shells; the next completed turn retires them',
  TurnEndLost:
    'the turn ended while nobody read its SessionReference, and its end fell out of status.endedTurns: ' +
    'how it ended is unknown, so it keeps its shells like an interrupted turn; the next completed turn retires them',
} as const;
export type KeepReason = keyof typeof KEEP_REASONS;

export type TurnEndDecision =
  | { readonly kind: 'Retire'; readonly reason: 'CompletedSubagentTurn' }
  | { readonly kind: 'Keep'; readonly reason: KeepReason };

export function decideTurnEnd(role: Role, phase: EndedPhase): TurnEndDecision {
  if (role !== 'Subagent') return { kind: 'Keep', reason: 'NotSubagent' };
  switch (phase) {
    case 'Completed':
      return { kind: 'Retire', reason: 'CompletedSubagentTurn' };
    case 'Failed':
      return { kind: 'Keep', reason: 'TurnFailed' };
    case 'Interrupted':
      return { kind: 'Keep', reason: 'TurnInterrupted' };
  }
}

/** The key of one turn of one session, used for fences and idempotency. */
export const turnKey = (session: string, turn: string): string => `${session}/${turn}`;
