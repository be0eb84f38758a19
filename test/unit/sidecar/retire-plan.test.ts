import { beforeEach, describe, expect, it } from 'vitest';
import {
  entryEffects,
  nextDeadline,
  startProgress,
  step,
  type Observation,
} from '../../../operator/sidecar/process/retire/retire-plan.ts';
import type { ShellGroup } from '../../../operator/sidecar/process/ledger/shell-group.ts';
import {
  isTerminal,
  type RetireState,
  type TargetProgress,
} from '../../../operator/sidecar/process/ledger/retire-targets.ts';

const group: ShellGroup = { shell: 'sh1', session: 's', turn: 't', pgid: 100, leaderStartTime: 500 };
const limits = { graceMs: 5_000, killTimeoutMs: 2_000 };
const leader = { pid: 100, startTime: 500 };
const member = { pid: 101, startTime: 510 };
const proven: Observation = { kind: 'Proven', witnesses: [leader], members: [leader, member] };
const groupScope = { kind: 'Group', pgid: 100 } as const;
const at = (state: RetireState): TargetProgress => ({ ...startProgress({ kind: 'Group', group }), state });
const surveyed = (observation: Observation) => ({ kind: 'Surveyed', observation }) as const;

describe('retire plan step', () => {
  it('starts fenced, then drops the shell’s notices before anything is signalled', () => {
    const start = startProgress({ kind: 'Group', group });
    expect(start).toEqual({
      id: 'group:sh1',
      target: { kind: 'Group', group },
      state: { kind: 'Fenced' },
      known: ['100:500'],
    });
    const { progress, effects } = step(start, { kind: 'Started' }, 0, limits);
    expect(progress.state).toEqual({ kind: 'NoticesDropped' });
    expect(effects).toEqual([{ kind: 'DropNotices', shell: 'sh1' }]);
  });

  it('ignores a survey while still fenced: notices go first', () => {
    const fenced = startProgress({ kind: 'Group', group });
    expect(step(fenced, surveyed(proven), 0, limits)).toEqual({ progress: fenced, effects: [] });
  });

  it('sends SIGTERM to a proven group and remembers its members', () => {
    const { progress, effects } = step(at({ kind: 'NoticesDropped' }), surveyed(proven), 42, limits);
    expect(progress.state).toEqual({ kind: 'Terminating', signalledAt: 42, witnesses: [leader] });
    expect(progress.known).toEqual(['100:500', '101:510']);
    expect(effects).toEqual([{ kind: 'Signal', signal: 'SIGTERM', scope: groupScope, witnesses: [leader] }]);
  });

  it('follows SIGTERM with SIGCONT so stopped members act on it', () => {
    const { progress, effects } = step(
      at({ kind: 'Terminating', signalledAt: 42, witnesses: [leader] }),
      { kind: 'Signalled' },
      43,
      limits,
    );
    expect(progress.state).toEqual({ kind: 'Continuing', signalledAt: 42, witnesses: [leader] });
    expect(effects).toEqual([{ kind: 'Signal', signal: 'SIGCONT', scope: groupScope, witnesses: [leader] }]);
  });

  it('signals nothing for a group already gone, reused, unprovable or protected', () => {
    const cases: [Observation, RetireState['kind']][] = [
      [{ kind: 'Empty' }, 'Done'],
      [{ kind: 'Recycled', reason: 'led by a newer process' }, 'Done'],
      [{ kind: 'Unproven', reason: 'unreadable', members: [member] }, 'Unreachable'],
      [{ kind: 'Protected', pids: [7] }, 'Unreachable'],
    ];
    for (const [observation, kind] of cases) {
      const { progress, effects } = step(at({ kind: 'NoticesDropped' }), surveyed(observation), 0, limits);
      expect(progress.state.kind).toBe(kind);
      expect(effects).toEqual([]);
    }
    expect(
      step(at({ kind: 'NoticesDropped' }), surveyed({ kind: 'Empty' }), 0, limits).progress.state,
    ).toEqual({
      kind: 'Done',
      how: 'AlreadyGone',
    });
  });

  it('waits out the grace while members live, then sends SIGKILL', () => {
    const continuing = at({ kind: 'Continuing', signalledAt: 1_000, witnesses: [leader] });
    const during = step(continuing, surveyed(proven), 5_999, limits);
    expect(during.progress.state.kind).toBe('Continuing');
    expect(during.effects).toEqual([]);
    const after = step(continuing, surveyed(proven), 6_000, limits);
    expect(after.progress.state).toEqual({
      kind: 'Killing',
      signalledAt: 1_000,
      killedAt: 6_000,
      witnesses: [leader],
    });
    expect(after.effects).toEqual([
      { kind: 'Signal', signal: 'SIGKILL', scope: groupScope, witnesses: [leader] },
    ]);
  });

  it('is done when the group is empty after SIGTERM, judged by the group and not its leader', () => {
    const continuing = at({ kind: 'Continuing', signalledAt: 0, witnesses: [leader] });
    const memberOnly: Observation = { kind: 'Proven', witnesses: [member], members: [member] };
    expect(step(continuing, surveyed(memberOnly), 10, limits).progress.state.kind).toBe('Continuing');
    expect(step(continuing, surveyed({ kind: 'Empty' }), 10, limits).progress.state).toEqual({
      kind: 'Done',
      how: 'Exited',
    });
  });

  it('re-sends SIGKILL each survey and reports survivors after the kill timeout', () => {
    const killing = at({ kind: 'Killing', signalledAt: 0, killedAt: 5_000, witnesses: [leader] });
    expect(step(killing, surveyed(proven), 6_000, limits).effects).toEqual([
      { kind: 'Signal', signal: 'SIGKILL', scope: groupScope, witnesses: [leader] },
    ]);
    expect(step(killing, surveyed({ kind: 'Empty' }), 6_000, limits).progress.state).toEqual({
      kind: 'Done',
      how: 'Killed',
    });
    const late = step(killing, surveyed(proven), 7_000, limits);
    expect(late.progress.state).toMatchObject({ kind: 'Unreachable', reason: 'Survived', pids: [100, 101] });
    expect(late.effects).toEqual([]);
  });

  it('counts a group id reused after the signals as done, not as a target', () => {
    const killing = at({ kind: 'Killing', signalledAt: 0, killedAt: 5_000, witnesses: [leader] });
    const { progress, effects } = step(
      killing,
      surveyed({ kind: 'Recycled', reason: 'new leader' }),
      5_100,
      limits,
    );
    expect(progress.state).toEqual({ kind: 'Done', how: 'Killed', detail: 'new leader' });
    expect(effects).toEqual([]);
  });

  it('makes a refused signal unreachable, and terminal states ignore every event', () => {
    const refused = step(
      at({ kind: 'Continuing', signalledAt: 0, witnesses: [leader] }),
      { kind: 'SignalRefused', signal: 'SIGCONT', detail: 'EPERM' },
      0,
      limits,
    );
    expect(refused.progress.state).toEqual({
      kind: 'Unreachable',
      reason: 'Refused',
      pids: [],
      detail: 'SIGCONT refused: EPERM',
    });
    expect(refused.effects).toEqual([]);
    expect(isTerminal(refused.progress.state)).toBe(true);
    const refusedAgain = { kind: 'SignalRefused', signal: 'SIGKILL', detail: 'ESRCH' } as const;
    for (const event of [
      { kind: 'Started' },
      { kind: 'Signalled' },
      surveyed(proven),
      refusedAgain,
    ] as const) {
      expect(step(refused.progress, event, 99_999, limits)).toEqual({
        progress: refused.progress,
        effects: [],
      });
    }
  });

  it('re-issues the signal of the journaled state when a restart resumes it', () => {
    expect(entryEffects(at({ kind: 'Terminating', signalledAt: 0, witnesses: [leader] }))).toEqual([
      { kind: 'Signal', signal: 'SIGTERM', scope: groupScope, witnesses: [leader] },
    ]);
    expect(
      entryEffects(at({ kind: 'Killing', signalledAt: 0, killedAt: 1, witnesses: [leader] }))[0],
    ).toMatchObject({ signal: 'SIGKILL' });
    expect(entryEffects(at({ kind: 'Done', how: 'Exited' }))).toEqual([]);
  });

  it('names the next deadline: the grace’s end while terminating, the kill timeout while killing', () => {
    expect(nextDeadline(at({ kind: 'Continuing', signalledAt: 1_000, witnesses: [leader] }), limits)).toBe(
      6_000,
    );
    expect(
      nextDeadline(at({ kind: 'Killing', signalledAt: 1_000, killedAt: 6_000, witnesses: [leader] }), limits),
    ).toBe(8_000);
    expect(nextDeadline(at({ kind: 'NoticesDropped' }), limits)).toBeUndefined();
  });

  it('signals an escapee by its own pid, never by a group', () => {
    const escapee = { pid: 300, startTime: 700, marker: { session: 's', turn: 't' } };
    expect(startProgress({ kind: 'Escapee', escapee })).toEqual({
      id: 'escapee:300:700',
      target: { kind: 'Escapee', escapee },
      state: { kind: 'Fenced' },
      known: ['300:700'],
    });
    const start = step(startProgress({ kind: 'Escapee', escapee }), { kind: 'Started' }, 0, limits);
    expect(start.effects).toEqual([]);
    expect(entryEffects(start.progress)).toEqual([]);
    const { effects } = step(start.progress, surveyed({ kind: 'Proven', witnesses: [escapee] }), 0, limits);
    expect(effects).toEqual([
      { kind: 'Signal', signal: 'SIGTERM', scope: { kind: 'Process', pid: 300 }, witnesses: [escapee] },
    ]);
  });
});

describe('retire plan step, phase by phase', () => {
  // Built in each test, not when the file loads: a mutant that breaks `startProgress` fails tests, not the file.
  let dropped: TargetProgress,
    terminating: TargetProgress,
    continuing: TargetProgress,
    killing: TargetProgress;
  beforeEach(() => {
    dropped = at({ kind: 'NoticesDropped' });
    terminating = at({ kind: 'Terminating', signalledAt: 1_000, witnesses: [leader] });
    continuing = at({ kind: 'Continuing', signalledAt: 1_000, witnesses: [leader] });
    killing = at({ kind: 'Killing', signalledAt: 0, killedAt: 5_000, witnesses: [leader] });
  });
  const unproven: Observation = { kind: 'Unproven', reason: 'environ unreadable', members: [member] };
  const unreachable = (reason: string, pids: number[], detail: string) => ({
    kind: 'Unreachable',
    reason,
    pids,
    detail,
  });

  it('starts a target once, and answers only SIGTERM with SIGCONT', () => {
    for (const progress of [dropped, terminating, continuing, killing])
      expect(step(progress, { kind: 'Started' }, 0, limits)).toEqual({ progress, effects: [] });
    for (const progress of [at({ kind: 'Fenced' }), dropped, continuing, killing])
      expect(step(progress, { kind: 'Signalled' }, 0, limits)).toEqual({ progress, effects: [] });
  });

  it('says how a target whose notices are dropped ends without a signal', () => {
    const recycled = step(
      dropped,
      surveyed({ kind: 'Recycled', reason: 'led by a newer process' }),
      0,
      limits,
    );
    expect(recycled.progress.state).toEqual({
      kind: 'Done',
      how: 'Recycled',
      detail: 'led by a newer process',
    });
    expect(step(dropped, surveyed(unproven), 0, limits).progress.state).toEqual(
      unreachable('Unproven', [101], 'environ unreadable'),
    );
  });

  it('never signals a protected process, in any phase, and says why', () => {
    for (const progress of [dropped, terminating, continuing, killing])
      expect(step(progress, surveyed({ kind: 'Protected', pids: [7] }), 9_999, limits)).toEqual({
        progress: {
          ...progress,
          state: unreachable('Protected', [7], 'the group holds a protected process'),
        },
        effects: [],
      });
  });

  it('keeps the latest witnesses through the grace', () => {
    const { progress, effects } = step(
      continuing,
      surveyed({ kind: 'Proven', witnesses: [member] }),
      5_999,
      limits,
    );
    expect(progress.state).toEqual({ kind: 'Continuing', signalledAt: 1_000, witnesses: [member] });
    expect(effects).toEqual([]);
  });

  it('waits out the grace for members it cannot prove ours, then reports them unreachable', () => {
    expect(step(continuing, surveyed(unproven), 5_999, limits)).toEqual({
      progress: continuing,
      effects: [],
    });
    expect(step(continuing, surveyed(unproven), 6_000, limits)).toEqual({
      progress: { ...continuing, state: unreachable('Unproven', [101], 'environ unreadable') },
      effects: [],
    });
  });

  it('sends no SIGKILL to members it cannot prove ours, and reports them at the kill timeout', () => {
    expect(step(killing, surveyed(unproven), 6_999, limits)).toEqual({ progress: killing, effects: [] });
    expect(step(killing, surveyed(unproven), 7_000, limits).progress.state).toEqual(
      unreachable('Unproven', [101], 'members outlived SIGKILL by 2000 ms'),
    );
  });

  it('re-sends SIGKILL to the witnesses of the latest survey, and keeps them', () => {
    const { progress, effects } = step(
      killing,
      surveyed({ kind: 'Proven', witnesses: [member] }),
      6_000,
      limits,
    );
    expect(progress.state).toEqual({ kind: 'Killing', signalledAt: 0, killedAt: 5_000, witnesses: [member] });
    expect(effects).toEqual([{ kind: 'Signal', signal: 'SIGKILL', scope: groupScope, witnesses: [member] }]);
  });

  it('reports the survivors by the witnesses when a survey named no other member', () => {
    const late = step(killing, surveyed({ kind: 'Proven', witnesses: [member] }), 7_000, limits);
    expect(late.progress.state).toEqual(
      unreachable('Survived', [101], 'members outlived SIGKILL by 2000 ms'),
    );
  });

  it('remembers at most 4096 members for the next survey, the earliest known first', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => ({ pid: 1_000 + i, startTime: 600 }));
    const observation: Observation = { kind: 'Proven', witnesses: [leader], members: many };
    const { known } = step(dropped, surveyed(observation), 0, limits).progress;
    expect(known).toHaveLength(4_096);
    expect(known.slice(0, 2)).toEqual(['100:500', '1000:600']);
    expect(known.at(-1)).toBe('5094:600');
  });

  it('re-issues on restart what each journaled state had under way, and nothing before the start or after the end', () => {
    for (const state of [
      { kind: 'Fenced' },
      { kind: 'Done', how: 'Exited' },
      unreachable('Refused', [], 'SIGTERM refused: EPERM'),
    ] as RetireState[])
      expect(entryEffects(at(state))).toEqual([]);
    expect(entryEffects(dropped)).toEqual([{ kind: 'DropNotices', shell: 'sh1' }]);
    expect(entryEffects(continuing)).toEqual([
      { kind: 'Signal', signal: 'SIGCONT', scope: groupScope, witnesses: [leader] },
    ]);
    expect(entryEffects(killing)).toEqual([
      { kind: 'Signal', signal: 'SIGKILL', scope: groupScope, witnesses: [leader] },
    ]);
  });

  it('names no deadline before the first signal or after the end; the grace’s end right after SIGTERM', () => {
    expect(nextDeadline(terminating, limits)).toBe(6_000);
    for (const state of [{ kind: 'Fenced' }, { kind: 'Done', how: 'Killed' }] as RetireState[])
      expect(nextDeadline(at(state), limits)).toBeUndefined();
  });
});
