/**
 * Which ended turns a SessionReference shows that the watch has not reported yet (docs/sidecar.md, "Turn
 * ends"): `status.endedTurns` (oldest first) and `status.turn`, so a turn overwritten between two reads is
 * still reported. Pure.
 *
 * Bounded (issue 12): per session it remembers only the turns the last status showed — a turn that fell out
 * of the history cannot be shown, so reported, again — and it forgets sessions whose reference is gone.
 * When the history is full, turns before its oldest entry may have ended while nobody read (more than
 * ENDED_TURNS_MAX in one watch gap); `full` then carries every turn the status shows, so the reaper can
 * settle its shell-bearing turns the status no longer shows (process/reaper.ts, `settleUnshownTurns`).
 */
import { ENDED_TURNS_MAX, type SessionReferenceStatus } from '../../../api/session-reference.ts';
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
  /** Set when `status.endedTurns` is full: turns may have ended unseen before its oldest entry. */
  readonly full?: { readonly shown: ReadonlySet<string> };
}

export class TurnHistory {
  /** session → `<turn>/<phase>` of each ended turn its last status showed. */
  readonly #shown = new Map<string, ReadonlySet<string>>();

  observe(session: string, status: SessionReferenceStatus | undefined): ObservedTurns {
    const before = this.#shown.get(session);
    const turns = endedTurnsOf(status);
    const keys = new Set(turns.map((t) => `${t.id}/${t.phase}`));
    this.#shown.set(session, keys);
    const ended = turns
      .filter((t) => before?.has(`${t.id}/${t.phase}`) !== true)
      .map((t) => ({ ...t, latest: status?.turn?.id === t.id }));
    if ((status?.endedTurns?.length ?? 0) < ENDED_TURNS_MAX) return { ended };
    const shown = new Set(turns.map((t) => t.id));
    if (status?.turn !== undefined) shown.add(status.turn.id);
    return { ended, full: { shown } };
  }

  /** The reference is gone. */
  forget(session: string): void {
    this.#shown.delete(session);
  }

  /** After a relist: the sessions the list still shows. */
  keepOnly(sessions: Iterable<string>): void {
    const kept = new Set(sessions);
    for (const session of this.#shown.keys()) if (!kept.has(session)) this.#shown.delete(session);
  }

  /** How many turns it remembers, over all sessions. */
  get size(): number {
    let size = 0;
    for (const keys of this.#shown.values()) size += keys.size;
    return size;
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
