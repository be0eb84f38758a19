import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../../operator/sidecar/process/ledger/journal-entries.ts';
import { startProgress } from '../../../operator/sidecar/process/retire/retire-plan.ts';
import { FakeJournal } from './fakes/fake-journal.ts';
import { FakeClock, FakeWorld } from './fakes/fake-world.ts';
import { completed, FakeTail, OPTIONS, signalsTo, spawnShell, startHarness } from './fakes/reaper-setup.ts';

const never = new AbortController().signal;

describe('shell notices', () => {
  it('publishes an exit notice for a shell whose group emptied, held until the hold has passed', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'parent', 'p1', 'build');
    await h.reaper.register(shell.request);
    h.world.exit(shell.leader.pid);
    await h.reaper.tickMonitor();
    expect((await h.outbox.read(0, 0, never)).notices).toEqual([]);
    await h.clock.sleep(OPTIONS.noticeHoldMs);
    const page = await h.outbox.read(0, 0, never);
    expect(page.notices).toMatchObject([
      { seq: 1, kind: 'Exit', shell: 'build', session: 'parent', turn: 'p1' },
    ]);
    await h.reaper.tickMonitor();
    expect((await h.outbox.read(page.cursor, 0, never)).notices).toEqual([]);
  });

  it('drops an exit notice still held when the turn ends, so the exit never reopens the subagent', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    await h.reaper.register(shell.request);
    h.world.exit(shell.leader.pid);
    await h.reaper.tickMonitor();
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();
    await h.clock.sleep(OPTIONS.noticeHoldMs * 10);
    expect((await h.outbox.read(0, 0, never)).notices).toEqual([]);
  });

  it('publishes nothing for a retired group, even while the kill is running or after it', async () => {
    const tail = new FakeTail();
    const h = await startHarness({ tail });
    const shell = spawnShell(h.world, 'child', 't1', 'sh1', { trapsTerm: true });
    await h.reaper.register({ ...shell.request, match: 'ready' });
    await h.reaper.endTurn(completed('child', 't1'));
    tail.write('sh1', 'server ready on :3000');
    await h.reaper.tickMonitor();
    await h.reaper.settled();
    await h.reaper.tickMonitor();
    await h.clock.sleep(OPTIONS.noticeHoldMs * 10);
    expect((await h.outbox.read(0, 0, never)).notices).toEqual([]);
    expect(tail.forgotten).toEqual(['sh1']);
  });

  it('publishes one match notice for the first complete line containing the literal', async () => {
    const tail = new FakeTail();
    const h = await startHarness({ tail });
    const shell = spawnShell(h.world, 'parent', 'p1', 'dev');
    await h.reaper.register({ ...shell.request, match: 'ready' });
    tail.write('dev', 'compiling', 'ready on :3000');
    await h.reaper.tickMonitor();
    tail.write('dev', 'ready again');
    await h.reaper.tickMonitor();
    const { notices } = await h.outbox.read(0, 0, never);
    expect(notices).toMatchObject([{ kind: 'Match', shell: 'dev', line: 'ready on :3000' }]);
  });
});

describe('restart', () => {
  it('resumes a retire journaled between SIGTERM and SIGKILL: CONT again, then KILL after the grace', async () => {
    const clock = new FakeClock();
    const world = new FakeWorld();
    const shell = spawnShell(world, 'child', 't1', 'sh1', { trapsTerm: true });
    const group = {
      shell: 'sh1',
      session: 'child',
      turn: 't1',
      pgid: shell.leader.pid,
      leaderStartTime: shell.leader.startTime,
    };
    const witness = { pid: shell.leader.pid, startTime: shell.leader.startTime };
    const at = clock.wallNow().toISOString();
    const journal = new FakeJournal<JournalEntry>([
      { type: 'ShellRegistered', at, group },
      {
        type: 'TurnEnded',
        at,
        session: 'child',
        turn: 't1',
        phase: 'Completed',
        role: 'Subagent',
        decision: { kind: 'Retire', reason: 'CompletedSubagentTurn' },
      },
      { type: 'RetireFenced', at, key: 'child/t1', session: 'child', turn: 't1', turns: ['t1'] },
      {
        type: 'TargetUpdated',
        key: 'child/t1',
        progress: {
          ...startProgress({ kind: 'Group', group }),
          state: { kind: 'Continuing', signalledAt: clock.now() - 1_000, witnesses: [witness] },
        },
      },
    ]);
    const h = await startHarness({ clock, world, journal });
    await h.reaper.settled();

    expect(signalsTo(world, shell.leader.pid)).toEqual([
      'Group:SIGCONT:Delivered',
      'Group:SIGKILL:Delivered',
    ]);
    expect(world.live(shell.leader.pid)).toEqual([]);
    expect(h.reaper.turnStatus('child', 't1').retire?.targets[0]?.state).toEqual({
      kind: 'Done',
      how: 'Killed',
    });
    expect(journal.rewrites).toBe(1);
  });

  it('stays idempotent across a restart: a replayed turn end is a duplicate and sends nothing', async () => {
    const first = await startHarness();
    await first.reaper.register(spawnShell(first.world, 'child', 't1', 'sh1').request);
    await first.reaper.endTurn(completed('child', 't1'));
    await first.reaper.settled();
    await first.reaper.stop(0);
    const second = await startHarness({ journal: first.journal, world: first.world, clock: first.clock });
    const before = first.world.sent.length;
    expect(await second.reaper.endTurn(completed('child', 't1'))).toMatchObject({
      kind: 'Duplicate',
      finished: true,
    });
    await second.reaper.settled();
    expect(first.world.sent.length).toBe(before);
  });

  it('neither loses an unread notice nor revives a dropped one across a restart', async () => {
    const first = await startHarness();
    const kept = spawnShell(first.world, 'parent', 'p1', 'build');
    const dropped = spawnShell(first.world, 'child', 't1', 'sh1');
    await first.reaper.register(kept.request);
    await first.reaper.register(dropped.request);
    first.world.exit(kept.leader.pid);
    first.world.exit(dropped.leader.pid);
    await first.reaper.tickMonitor();
    await first.reaper.endTurn(completed('child', 't1'));
    await first.reaper.settled();
    const second = await startHarness({ journal: first.journal, world: first.world, clock: first.clock });
    await second.clock.sleep(OPTIONS.noticeHoldMs);
    const { notices } = await second.outbox.read(0, 0, never);
    expect(notices.map((n) => n.shell)).toEqual(['build']);
  });
});
