/**
 * Issue 12 defects, through the reaper over the fake world: what a caller can make the sidecar kill (or
 * spare) that it must not, and what it can miss that it must end. Each case failed before its fix.
 */
import { describe, expect, it } from 'vitest';
import { completed, forkMember, OPTIONS, spawnShell, startHarness } from './fakes/reaper-setup.ts';

const never = new AbortController().signal;

describe('protected agent hosts', () => {
  it('stops protecting a host pid once that process is gone: a recycled pid is an ordinary shell again', async () => {
    const h = await startHarness();
    const host = h.world.spawn();
    await h.reaper.register(spawnShell(h.world, 'child', 't1', 'sh1', { ppid: host.pid }).request);
    expect(h.world.protectedPids().has(host.pid)).toBe(true);
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();
    // The host exits and its pid comes back as the leader of a later subagent turn's shell.
    h.world.exit(host.pid);
    h.world.reapZombies();
    const recycled = spawnShell(h.world, 'child', 't2', 'sh2', { pid: host.pid });
    expect(await h.reaper.register(recycled.request)).toEqual({ kind: 'Registered', shell: 'sh2' });
    await h.reaper.endTurn(completed('child', 't2'));
    await h.reaper.settled();
    expect(h.world.live(recycled.leader.pid)).toEqual([]);
    expect(h.reporter.retired.at(-1)?.summary).toMatchObject({ retiredGroups: 1, unreachable: 0 });
  });

  it('never protects a process inside a registered shell: a shell cannot make itself unkillable', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    await h.reaper.register(shell.request);
    // A member of the shell with a cleared environment spawns a marked, detached child and registers it,
    // so the member would become "the agent host" and its whole group would be spared.
    const member = forkMember(h.world, shell.leader);
    member.environ = undefined;
    const poisoner = spawnShell(h.world, 'child', 't1', 'sh2', { ppid: member.pid });
    await h.reaper.register(poisoner.request);
    expect(h.world.protectedPids().has(member.pid)).toBe(false);
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();
    expect(h.world.live(shell.leader.pid)).toEqual([]);
    expect(h.world.live(poisoner.leader.pid)).toEqual([]);
  });
});

describe('kept turns', () => {
  it('keeps a failed turn in the journal after thousands of other turn ends, so its shells still end', async () => {
    const first = await startHarness();
    const failed = spawnShell(first.world, 'child', 't1', 'sh1');
    await first.reaper.register(failed.request);
    await first.reaper.endTurn({ ...completed('child', 't1'), phase: 'Failed' });
    for (let i = 0; i < 2100; i += 1)
      await first.reaper.endTurn({ session: `root-${i}`, turn: 't', phase: 'Completed', role: 'Root' });
    await first.reaper.stop(0);
    // Two restarts: the first compacts the journal, the second rebuilds the ledger from what was kept.
    const again = { journal: first.journal, world: first.world, clock: first.clock };
    await (await startHarness(again)).reaper.stop(0);
    const second = await startHarness(again);
    await second.reaper.endTurn(completed('child', 't2'));
    await second.reaper.settled();
    expect(first.world.live(failed.leader.pid)).toEqual([]);
  });
});

describe('fence and drop before the scan', () => {
  it('drops the turn’s pending notices before the first /proc scan of its retire', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    await h.reaper.register(shell.request);
    h.world.exit(shell.leader.pid);
    await h.reaper.tickMonitor();
    const seenAtFirstScan: string[][] = [];
    const scan = h.world.scan.bind(h.world);
    h.world.scan = async () => {
      // The scan takes longer than the notice's hold: what can the host read meanwhile?
      await h.clock.sleep(OPTIONS.noticeHoldMs);
      const due = (await h.outbox.read(0, 0, never)).notices;
      seenAtFirstScan.push(due.map((n) => n.shell));
      return scan();
    };
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();
    expect(seenAtFirstScan[0]).toEqual([]);
    await h.clock.sleep(OPTIONS.noticeHoldMs * 10);
    expect((await h.outbox.read(0, 0, never)).notices).toEqual([]);
  });
});

describe('turn ends lost in a watch gap', () => {
  // More than 32 turns ended between two reads: t1's end fell out of status.endedTurns (turn-history.ts).
  const later = Array.from({ length: 32 }, (_, i) => `u${i + 1}`);
  const shown = new Set([...later, 'u33']);

  it('retires, with the next completed turn, the shells of a turn a full history no longer shows', async () => {
    const h = await startHarness();
    const lost = spawnShell(h.world, 'child', 't1', 'sh1');
    const current = spawnShell(h.world, 'child', 'u33', 'sh2');
    await h.reaper.register(lost.request);
    await h.reaper.register(current.request);
    expect(await h.reaper.settleUnshownTurns('child', 'Subagent', shown)).toEqual(['t1']);
    for (const turn of later.slice(0, -1))
      await h.reaper.endTurn({ ...completed('child', turn), phase: 'Failed' });
    await h.reaper.endTurn(completed('child', 'u32'));
    await h.reaper.settled();
    expect(h.world.live(lost.leader.pid)).toEqual([]);
    // The turn the status shows running keeps its shells until it ends.
    expect(h.world.live(current.leader.pid).map((p) => p.pid)).toEqual([current.leader.pid]);
    expect(h.reaper.turnStatus('child', 't1').turnEnd?.decision).toEqual({
      kind: 'Keep',
      reason: 'TurnEndLost',
    });
  });

  it('settles nothing a status still shows, nothing already ended, and no root session', async () => {
    const h = await startHarness();
    const failed = spawnShell(h.world, 'child', 't0', 'sh0');
    await h.reaper.register(failed.request);
    await h.reaper.endTurn({ ...completed('child', 't0'), phase: 'Failed' });
    const shownTurn = spawnShell(h.world, 'child', 'u5', 'sh5');
    await h.reaper.register(shownTurn.request);
    const root = spawnShell(h.world, 'parent', 'p1', 'sh9');
    await h.reaper.register(root.request);
    expect(await h.reaper.settleUnshownTurns('child', 'Subagent', shown)).toEqual([]);
    expect(await h.reaper.settleUnshownTurns('parent', 'Root', shown)).toEqual([]);
    expect(h.reaper.turnStatus('child', 't0').turnEnd?.decision.reason).toBe('TurnFailed');
  });
});
