import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../../operator/sidecar/process/ledger/journal-entries.ts';
import { startProgress } from '../../../operator/sidecar/process/retire/retire-plan.ts';
import {
  applyEntry,
  compactLedger,
  emptyLedger,
  fenceOf,
  planRetire,
  summarize,
  type Ledger,
} from '../../../operator/sidecar/process/ledger/shell-ledger.ts';
import type { ShellGroup } from '../../../operator/sidecar/process/ledger/shell-group.ts';

const at = '2026-01-01T00:00:00.000Z';
const group = (shell: string, session: string, turn: string, pgid: number): ShellGroup => ({
  shell,
  session,
  turn,
  pgid,
  leaderStartTime: pgid * 10,
});
const ended = (
  session: string,
  turn: string,
  phase: 'Completed' | 'Failed' | 'Interrupted',
): JournalEntry => ({
  type: 'TurnEnded',
  at,
  session,
  turn,
  phase,
  role: 'Subagent',
  decision:
    phase === 'Completed'
      ? { kind: 'Retire', reason: 'CompletedSubagentTurn' }
      : { kind: 'Keep', reason: phase === 'Failed' ? 'TurnFailed' : 'TurnInterrupted' },
});
const fold = (entries: readonly JournalEntry[]): Ledger => {
  const ledger = emptyLedger();
  for (const e of entries) applyEntry(ledger, e);
  return ledger;
};

describe('ledger', () => {
  const history: JournalEntry[] = [
    { type: 'ShellRegistered', at, group: group('a', 'child', 't1', 100) },
    { type: 'ShellRegistered', at, group: group('b', 'child', 't2', 200) },
    { type: 'ShellRegistered', at, group: group('c', 'child', 't3', 300) },
    { type: 'ShellRegistered', at, group: group('p', 'parent', 't2', 400) },
    { type: 'ShellExited', at, shell: 'a' },
    ended('child', 't1', 'Interrupted'),
  ];

  it('plans a retire of the turn’s shells plus those kept by earlier failed or interrupted turns', () => {
    const plan = planRetire(fold(history), 'child', 't2');
    expect(plan.turns).toEqual(['t2', 't1']);
    expect(plan.groups.map((g) => g.shell)).toEqual(['a', 'b']);
  });

  it('fences every covered turn, and a finished retire forgets its shells', () => {
    const key = 'child/t2';
    const ledger = fold([
      ...history,
      ended('child', 't2', 'Completed'),
      { type: 'RetireFenced', at, key, session: 'child', turn: 't2', turns: ['t2', 't1'] },
      {
        type: 'TargetUpdated',
        key,
        progress: {
          ...startProgress({ kind: 'Group', group: group('a', 'child', 't1', 100) }),
          state: { kind: 'Done', how: 'AlreadyGone' },
        },
      },
    ]);
    expect(fenceOf(ledger, 'child', 't1')?.key).toBe(key);
    expect(fenceOf(ledger, 'child', 't3')).toBeUndefined();
    // Shell a is held by the unfinished retire: no second retire may plan it.
    expect(planRetire(fold(history), 'child', 't1').groups.map((g) => g.shell)).toEqual(['a']);
    expect(planRetire(ledger, 'child', 't1').groups).toEqual([]);
    const retire = ledger.retires.get(key)!;
    applyEntry(ledger, { type: 'RetireFinished', at, key, summary: summarize(retire) });
    expect([...ledger.shells.keys()]).toEqual(['b', 'c', 'p']);
  });

  it('summarizes groups, SIGKILLs, escapees and unreachable processes', () => {
    const ledger = fold([{ type: 'RetireFenced', at, key: 'k', session: 's', turn: 't', turns: ['t'] }]);
    const retire = ledger.retires.get('k')!;
    const g = (shell: string) => startProgress({ kind: 'Group', group: group(shell, 's', 't', 10) });
    retire.targets.set('1', { ...g('x'), id: '1', state: { kind: 'Done', how: 'Killed' } });
    retire.targets.set('2', { ...g('y'), id: '2', state: { kind: 'Done', how: 'Exited' } });
    retire.targets.set('3', {
      ...g('z'),
      id: '3',
      state: { kind: 'Unreachable', reason: 'Refused', pids: [7, 8], detail: 'EPERM' },
    });
    retire.targets.set('4', {
      ...startProgress({
        kind: 'Escapee',
        escapee: { pid: 9, startTime: 1, marker: { session: 's', turn: 't' } },
      }),
      state: { kind: 'Done', how: 'Exited' },
    });
    expect(summarize(retire)).toEqual({
      retiredGroups: 2,
      killedGroups: 1,
      escapees: 1,
      unreachable: 2,
      unreachablePids: [7, 8],
      message: '2 shell group(s) retired (1 needed SIGKILL), 1 escapee(s), 2 unreachable; Refused: EPERM',
    });
  });

  it('compacts to entries that rebuild the same ledger', () => {
    const original = fold([
      ...history,
      { type: 'ShellMatched', at, shell: 'b' },
      ended('child', 't2', 'Completed'),
      { type: 'RetireFenced', at, key: 'child/t2', session: 'child', turn: 't2', turns: ['t2', 't1'] },
      {
        type: 'TargetUpdated',
        key: 'child/t2',
        progress: startProgress({ kind: 'Group', group: group('b', 'child', 't2', 200) }),
      },
    ]);
    expect(fold(compactLedger(original))).toEqual(original);
  });
});
