/**
 * Who decides what a turn end retires (issue 12): the SessionReference, never the caller. Any shell in the
 * pod can reach the socket and read another session's ids from /proc/<pid>/environ, so a turn end a caller
 * sends is believed only when the reference already says the same: its immutable `spec.role`, and that
 * turn ended with that phase (`status.turn` or `status.endedTurns`). A request that disagrees is refused
 * and logged; one that agrees adds nothing the watch would not do by itself. Pure.
 */
import type { Role } from '../../../api/session-reference.ts';
import type { EndTurnRequest } from '../../contract/requests.ts';
import type { EndedPhase } from './turn-decision.ts';

export interface ReferenceFacts {
  readonly reference: string;
  readonly role: Role;
  /** Turn id → how it ended, as the reference shows it. */
  readonly ended: ReadonlyMap<string, EndedPhase>;
}

export type TurnEndVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export function judgeTurnEnd(request: EndTurnRequest, facts: ReferenceFacts | undefined): TurnEndVerdict {
  const { session, turn, phase, role } = request;
  if (facts === undefined)
    return { ok: false, reason: `no SessionReference of this sandbox names session ${session}` };
  if (facts.role !== role) {
    return {
      ok: false,
      reason: `the request names role ${role}; SessionReference ${facts.reference} says ${facts.role}`,
    };
  }
  const shown = facts.ended.get(turn);
  if (shown !== phase) {
    return {
      ok: false,
      reason:
        shown === undefined
          ? `SessionReference ${facts.reference} does not show turn ${turn} ended: write status.turn first`
          : `SessionReference ${facts.reference} shows turn ${turn} ${shown}, not ${phase}`,
    };
  }
  return { ok: true };
}
