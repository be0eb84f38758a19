/**
 * Which ended turns a SessionReference shows that the watch has not reported yet (docs/sidecar.md, "Turn
 * ends"): `status.endedTurns` (oldest first) and `status.turn`, so a turn overwritten between two reads is
 * still reported. Pure.
 */
import type { SessionReferenceStatus } from '../../api/session-reference.ts';
import type { EndedPhase } from './turn-decision.ts';

export interface EndedTurnSeen {
  readonly id: string;
  readonly phase: EndedPhase;
  /** It is `status.turn`, not only in the history. */
  readonly latest: boolean;
}

export interface ObservedTurns {
  /** Ended turns not reported before, oldest first. */
  readonly ended: readonly EndedTurnSeen[];
}

export class TurnHistory {
  readonly #seen = new Set<string>();

  observe(session: string, status: SessionReferenceStatus | undefined): ObservedTurns {
    const ended: EndedTurnSeen[] = [];
    for (const turn of endedTurnsOf(status)) {
      const key = `${session}/${turn.id}/${turn.phase}`;
      if (this.#seen.has(key)) continue;
      this.#seen.add(key);
      ended.push({ ...turn, latest: status?.turn?.id === turn.id });
    }
    return { ended };
  }

  /** The reference is gone. */
  forget(_session: string): void {}

  /** After a relist: the sessions the list still shows. */
  keepOnly(_sessions: Iterable<string>): void {}

  /** How many turn keys it remembers. */
  get size(): number {
    return this.#seen.size;
  }
}

/** The ended turns a status shows, oldest first: the history, then the latest turn if it ended. */
export function endedTurnsOf(
  status: SessionReferenceStatus | undefined,
): { readonly id: string; readonly phase: EndedPhase }[] {
  const ended = [...(status?.endedTurns ?? [])];
  const latest = status?.turn;
  if (latest !== undefined && latest.phase !== 'Running' && !ended.some((t) => t.id === latest.id))
    ended.push({ id: latest.id, phase: latest.phase });
  return ended;
}
