import { describe, expect, it } from 'vitest';
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
    expect(step(startProgress({ kind: 'Group', group }), surveyed(proven), 0, limits).effects).toEqual([]);
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
    expect(isTerminal(refused.progress.state)).toBe(true);
    for (const event of [{ kind: 'Started' }, { kind: 'Signalled' }, surveyed(proven)] as const) {
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
    const start = step(startProgress({ kind: 'Escapee', escapee }), { kind: 'Started' }, 0, limits);
    expect(start.effects).toEqual([]);
    const { effects } = step(start.progress, surveyed({ kind: 'Proven', witnesses: [escapee] }), 0, limits);
    expect(effects).toEqual([
      { kind: 'Signal', signal: 'SIGTERM', scope: { kind: 'Process', pid: 300 }, witnesses: [escapee] },
    ]);
  });
});
