import { describe, expect, it } from 'vitest';
import { completed, forkMember, OPTIONS, signalsTo, spawnShell, startHarness } from './fakes/reaper-setup.ts';

describe('retiring a completed subagent turn', () => {
  it('terminates the session’s group, leaves the parent’s dev server alone and reports what it did', async () => {
    const h = await startHarness();
    const child = spawnShell(h.world, 'child', 't1', 'sh1');
    const parentServer = spawnShell(h.world, 'parent', 'p1', 'dev');
    forkMember(h.world, child.leader);
    await h.reaper.register(child.request);
    await h.reaper.register(parentServer.request);

    expect(await h.reaper.endTurn(completed('child', 't1'))).toEqual({
      kind: 'Retiring',
      retire: 'child/t1',
      groups: 1,
    });
    await h.reaper.settled();

    expect(h.world.live(child.leader.pid)).toEqual([]);
    expect(signalsTo(h.world, child.leader.pid)).toEqual(['Group:SIGTERM:Delivered']);
    expect(h.world.live(parentServer.leader.pid)).toHaveLength(1);
    expect(signalsTo(h.world, parentServer.leader.pid)).toEqual([]);
    expect(h.reporter.retired).toEqual([
      {
        session: 'child',
        turn: 't1',
        finishedAt: expect.any(String) as string,
        summary: {
          retiredGroups: 1,
          killedGroups: 0,
          escapees: 0,
          unreachable: 0,
          unreachablePids: [],
          message: '1 shell group(s) retired (0 needed SIGKILL), 0 escapee(s), 0 unreachable',
        },
      },
    ]);
  });

  it('escalates to SIGKILL after the grace when the shell and its grandchild trap SIGTERM', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1', { trapsTerm: true });
    forkMember(h.world, shell.leader, { trapsTerm: true });
    await h.reaper.register(shell.request);
    const started = h.clock.now();
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(h.world.live(shell.leader.pid)).toEqual([]);
    expect(signalsTo(h.world, shell.leader.pid)).toEqual([
      'Group:SIGTERM:Delivered',
      'Group:SIGCONT:Delivered',
      'Group:SIGKILL:Delivered',
    ]);
    expect(h.clock.now() - started).toBeGreaterThanOrEqual(OPTIONS.graceMs);
    // In virtual time the driver wakes at the grace's end, so SIGKILL goes out exactly then, not a poll later.
    const killing = h.journal.entries.flatMap((e) =>
      e.type === 'TargetUpdated' && e.progress.state.kind === 'Killing' ? [e.progress.state] : [],
    );
    expect(killing.map((k) => k.killedAt - k.signalledAt)).toEqual([OPTIONS.graceMs]);
    expect(h.reaper.turnStatus('child', 't1').retire?.targets).toEqual([
      { id: 'group:sh1', state: { kind: 'Done', how: 'Killed' } },
    ]);
  });

  it('judges "done" by the group: a leader that dies on SIGTERM does not end the retire while a grandchild traps it', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    const grandchild = forkMember(h.world, shell.leader, { trapsTerm: true });
    await h.reaper.register(shell.request);
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(grandchild.state).toBe('Z');
    expect(signalsTo(h.world, shell.leader.pid)).toContain('Group:SIGKILL:Delivered');
  });

  it('reaches the members of a group whose leader already exited, and never signals a pid alone', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    const member = forkMember(h.world, shell.leader);
    await h.reaper.register(shell.request);
    h.world.exit(shell.leader.pid);
    h.world.reapZombies();
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(member.state).toBe('Z');
    expect(h.world.sent.every((s) => s.kind === 'Group')).toBe(true);
  });

  it('continues a stopped member so it acts on SIGTERM, with no SIGKILL needed', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    const stopped = forkMember(h.world, shell.leader, { state: 'T' });
    await h.reaper.register(shell.request);
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(stopped.state).toBe('Z');
    expect(signalsTo(h.world, shell.leader.pid)).toEqual([
      'Group:SIGTERM:Delivered',
      'Group:SIGCONT:Delivered',
    ]);
    expect(h.reaper.turnStatus('child', 't1').retire?.targets[0]?.state).toEqual({
      kind: 'Done',
      how: 'Exited',
    });
  });

  it('sends nothing to a group id now owned by another session’s shell', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    await h.reaper.register(shell.request);
    h.world.exit(shell.leader.pid);
    h.world.reapZombies();
    const stranger = spawnShell(h.world, 'parent', 'p1', 'dev', { pid: shell.leader.pid });
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(h.world.sent).toEqual([]);
    expect(stranger.leader.state).toBe('S');
    expect(h.reaper.turnStatus('child', 't1').retire?.targets[0]?.state).toMatchObject({
      kind: 'Done',
      how: 'Recycled',
    });
  });

  it('finds a setsid escapee by its marker and signals it alone; a marker-less process is never touched', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    await h.reaper.register(shell.request);
    const escapee = h.world.spawn({ ppid: 1, marker: { session: 'child', turn: 't1', shell: 'sh1' } });
    const cleared = h.world.spawn({ ppid: 1 });
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(escapee.state).toBe('Z');
    expect(signalsTo(h.world, escapee.pid)).toEqual(['Process:SIGTERM:Delivered']);
    expect(cleared.state).toBe('S');
    expect(h.reporter.retired[0]?.summary).toMatchObject({ retiredGroups: 1, escapees: 1, unreachable: 0 });
  });

  it('never signals a group that holds the agent host, and reports it unreachable', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    await h.reaper.register(shell.request);
    h.world.protect(forkMember(h.world, shell.leader).pid);
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(h.world.sent).toEqual([]);
    expect(h.reporter.retired[0]?.summary).toMatchObject({ retiredGroups: 0, unreachable: 1 });
  });

  it('reports a group it may not signal (EPERM) as unreachable instead of claiming it', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    await h.reaper.register(shell.request);
    h.world.refuseWith = 'EPERM';
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(h.world.live(shell.leader.pid)).toHaveLength(1);
    expect(h.reaper.turnStatus('child', 't1').retire?.targets[0]?.state).toMatchObject({
      kind: 'Unreachable',
      reason: 'Refused',
    });
    expect(h.reporter.retired[0]?.summary.unreachable).toBe(1);
  });

  it('reports members that outlive SIGKILL (D state) after the kill timeout, and stops', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1', { state: 'D' });
    await h.reaper.register(shell.request);
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(h.reaper.turnStatus('child', 't1').retire?.targets[0]?.state).toMatchObject({
      kind: 'Unreachable',
      reason: 'Survived',
      pids: [shell.leader.pid],
    });
  });

  it('still retires when the journal cannot be written, and when the status report fails', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    await h.reaper.register(shell.request);
    h.journal.failAppends = true;
    h.reporter.fail = true;
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();

    expect(h.world.live(shell.leader.pid)).toEqual([]);
    expect(h.reaper.turnStatus('child', 't1').retire?.finished).toBeDefined();
  });
});
