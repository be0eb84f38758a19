/**
 * What the SessionReference watch reports (issue 12): every ended turn once, however long the session runs,
 * with memory bounded by what the references show; and, when the host's history is full, that turns may
 * have ended unseen before its oldest entry, with the turns it does show.
 */
import { describe, expect, it } from 'vitest';
import { ENDED_TURNS_MAX, type EndedTurn } from '../../../operator/api/session-reference.ts';
import { TurnHistory } from '../../../operator/sidecar/process/turns/turn-history.ts';

/** The status the agent host writes (operator/client recordTurn): the latest turn and the last 32 ended. */
function hostStatus(latest: EndedTurn | { id: string; phase: 'Running' }, ended: readonly EndedTurn[]) {
  return {
    turn: { ...latest, origin: 'ParentMessage' as const },
    endedTurns: ended.slice(-ENDED_TURNS_MAX),
  };
}

describe('the turn history of the reference watch', () => {
  it('reports each of 10,000 turn ends once and remembers no more than one status shows', () => {
    const history = new TurnHistory();
    const ended: EndedTurn[] = [];
    const reported: string[] = [];
    for (let i = 0; i < 10_000; i += 1) {
      const turn = { id: `t${i}`, phase: 'Completed' as const };
      ended.push(turn);
      for (const seen of history.observe('child', hostStatus(turn, ended)).ended) reported.push(seen.id);
    }
    expect(reported.length).toBe(10_000);
    expect(new Set(reported).size).toBe(10_000);
    expect(history.size).toBeLessThanOrEqual(ENDED_TURNS_MAX + 1);
  });

  it('forgets a deleted reference’s turns, and those of sessions a relist no longer shows', () => {
    const history = new TurnHistory();
    const status = hostStatus({ id: 't1', phase: 'Completed' }, [{ id: 't1', phase: 'Completed' }]);
    history.observe('a', status);
    history.observe('b', status);
    history.observe('c', status);
    history.forget('a');
    history.keepOnly(['b']);
    expect(history.size).toBe(1);
    // A session seen again after being forgotten reports its turns again (the reaper is idempotent).
    expect(history.observe('c', status).ended.map((t) => t.id)).toEqual(['t1']);
  });

  it('says when the history is full — turns before its oldest entry may have ended unseen — and which turns it shows', () => {
    const history = new TurnHistory();
    expect(history.observe('child', hostStatus({ id: 't1', phase: 'Running' }, [])).full).toBeUndefined();
    // A gap: t1 completes, then 32 more turns end, before the next read.
    const later = Array.from({ length: 32 }, (_, i) => ({ id: `u${i + 1}`, phase: 'Failed' as const }));
    const observed = history.observe(
      'child',
      hostStatus({ id: 'u33', phase: 'Running' }, [{ id: 't1', phase: 'Completed' }, ...later]),
    );
    expect(observed.ended.map((t) => t.id)).toEqual(later.map((t) => t.id));
    expect(observed.full).toBeDefined();
    expect([...(observed.full?.shown ?? [])].sort()).toEqual([...later.map((t) => t.id), 'u33'].sort());
  });
});
