import { describe, expect, it } from 'vitest';
import { completed, forkMember, signalsTo, spawnShell, startHarness } from './fakes/reaper-setup.ts';

describe('registration', () => {
  it('records a shell only when /proc proves the leader, its group, its start time and its marker', async () => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'child', 't1', 'sh1');
    const refusals = [
      { ...shell.request, leaderStartTime: shell.request.leaderStartTime + 1 },
      { ...shell.request, turn: 't2' },
      { ...shell.request, shell: 'other' },
      { ...shell.request, pgid: 4000, leaderPid: 4000 },
    ];
    for (const request of refusals) {
      expect(await h.reaper.register(request)).toMatchObject({ kind: 'Refused', code: 'IdentityMismatch' });
    }
    const member = forkMember(h.world, shell.leader);
    const notLeader = {
      ...shell.request,
      pgid: member.pid,
      leaderPid: member.pid,
      leaderStartTime: member.startTime,
    };
    expect(await h.reaper.register(notLeader)).toMatchObject({ kind: 'Refused', code: 'IdentityMismatch' });
    expect(await h.reaper.register(shell.request)).toEqual({ kind: 'Registered', shell: 'sh1' });
    expect(await h.reaper.register(shell.request)).toEqual({ kind: 'AlreadyRegistered', shell: 'sh1' });
  });

  it('refuses a leader without a marker or with an unreadable environment', async () => {
    const h = await startHarness();
    const bare = h.world.spawn();
    const hidden = h.world.spawn({ marker: 'unreadable' });
    const request = (pid: number, startTime: number) => ({
      session: 's',
      turn: 't',
      shell: 'x',
      pgid: pid,
      leaderPid: pid,
      leaderStartTime: startTime,
    });
    expect(await h.reaper.register(request(bare.pid, bare.startTime))).toEqual({
      kind: 'Refused',
      code: 'IdentityMismatch',
      reason: `process ${bare.pid} carries no marker`,
    });
    expect(await h.reaper.register(request(hidden.pid, hidden.startTime))).toMatchObject({
      reason: expect.stringContaining('EACCES') as string,
    });
  });

  it('refuses a second group under a registered shell id', async () => {
    const h = await startHarness();
    await h.reaper.register(spawnShell(h.world, 's', 't', 'sh1').request);
    const other = spawnShell(h.world, 's', 't', 'sh1');
    expect(await h.reaper.register(other.request)).toMatchObject({ kind: 'Refused', code: 'ShellConflict' });
  });

  it('protects the agent host (the leader’s unmarked parent) from every later signal', async () => {
    const h = await startHarness();
    const host = h.world.spawn();
    await h.reaper.register(spawnShell(h.world, 's', 't', 'sh1', { ppid: host.pid }).request);
    expect(h.world.protectedPids().has(host.pid)).toBe(true);
    const nested = spawnShell(h.world, 's', 't', 'sh2');
    const inner = spawnShell(h.world, 's', 't', 'sh3', { ppid: nested.leader.pid });
    await h.reaper.register(inner.request);
    expect(h.world.protectedPids().has(nested.leader.pid)).toBe(false);
  });
});

describe('fence and turn scope', () => {
  it('includes a shell registered after its turn ended in that turn’s retire (answered TurnEnded)', async () => {
    const h = await startHarness();
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();
    const late = spawnShell(h.world, 'child', 't1', 'late');
    expect(await h.reaper.register(late.request)).toEqual({
      kind: 'Included',
      shell: 'late',
      retire: 'child/t1',
    });
    await h.reaper.settled();
    expect(h.world.live(late.leader.pid)).toEqual([]);
    expect(h.reporter.retired.at(-1)?.summary.retiredGroups).toBe(1);
  });

  it('answers a duplicate turn end with the first outcome and no second sweep', async () => {
    const h = await startHarness();
    await h.reaper.register(spawnShell(h.world, 'child', 't1', 'sh1').request);
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();
    const next = spawnShell(h.world, 'child', 't2', 'sh2');
    await h.reaper.register(next.request);
    expect(await h.reaper.endTurn(completed('child', 't1'))).toEqual({
      kind: 'Duplicate',
      decision: { kind: 'Retire', reason: 'CompletedSubagentTurn' },
      finished: true,
    });
    await h.reaper.settled();
    expect(signalsTo(h.world, next.leader.pid)).toEqual([]);
    expect(h.reporter.retired).toHaveLength(1);
  });

  it('lets a resumed turn start shells again and retires them at that turn’s end', async () => {
    const h = await startHarness();
    await h.reaper.register(spawnShell(h.world, 'child', 't1', 'sh1').request);
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();
    const resumed = spawnShell(h.world, 'child', 't2', 'sh2');
    expect(await h.reaper.register(resumed.request)).toEqual({ kind: 'Registered', shell: 'sh2' });
    expect(h.world.live(resumed.leader.pid)).toHaveLength(1);
    await h.reaper.endTurn(completed('child', 't2'));
    await h.reaper.settled();
    expect(h.world.live(resumed.leader.pid)).toEqual([]);
  });

  it('keeps the shells of failed and interrupted turns, and retires them at the next completed turn', async () => {
    const h = await startHarness();
    const failed = spawnShell(h.world, 'child', 't1', 'sh1');
    const interrupted = spawnShell(h.world, 'child', 't2', 'sh2');
    await h.reaper.register(failed.request);
    await h.reaper.register(interrupted.request);
    expect(await h.reaper.endTurn({ ...completed('child', 't1'), phase: 'Failed' })).toEqual({
      kind: 'Kept',
      reason: 'TurnFailed',
    });
    expect(await h.reaper.endTurn({ ...completed('child', 't2'), phase: 'Interrupted' })).toEqual({
      kind: 'Kept',
      reason: 'TurnInterrupted',
    });
    await h.reaper.settled();
    expect(h.world.sent).toEqual([]);
    expect(await h.reaper.endTurn(completed('child', 't3'))).toEqual({
      kind: 'Retiring',
      retire: 'child/t3',
      groups: 2,
    });
    await h.reaper.settled();
    expect([...h.world.live(failed.leader.pid), ...h.world.live(interrupted.leader.pid)]).toEqual([]);
  });

  it.each(['Root', 'Board', 'Ticket'] as const)('never touches a %s session’s shells', async (role) => {
    const h = await startHarness();
    const shell = spawnShell(h.world, 'other', 't1', 'sh1');
    await h.reaper.register(shell.request);
    expect(await h.reaper.endTurn({ ...completed('other', 't1'), role })).toEqual({
      kind: 'Kept',
      reason: 'NotSubagent',
    });
    await h.reaper.settled();
    expect(h.world.sent).toEqual([]);
  });

  it('leaves a later turn’s shells out of an earlier turn’s retire', async () => {
    const h = await startHarness();
    const early = spawnShell(h.world, 'child', 't1', 'sh1');
    const later = spawnShell(h.world, 'child', 't2', 'sh2');
    await h.reaper.register(early.request);
    await h.reaper.register(later.request);
    await h.reaper.endTurn(completed('child', 't1'));
    await h.reaper.settled();
    expect(h.world.live(early.leader.pid)).toEqual([]);
    expect(h.world.live(later.leader.pid)).toHaveLength(1);
  });
});
