/**
 * The retire with real processes: real shells spawned detached with the marker by the client's spawn
 * helper (this test process stands in for the agent host), a real sidecar, real signals.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  isAlive,
  liveMembers,
  procSnapshot,
  startFixture,
  waitFor,
  type SidecarFixture,
} from './fixtures/process-fixtures.ts';
import { pending } from '../../harness/eventually.ts';

const completed = (session: string, turn: string) =>
  ({ session, turn, phase: 'Completed', role: 'Subagent' }) as const;

async function membersAtLeast(pgid: number, count: number) {
  return waitFor(`${count} live members in group ${pgid}`, async () => {
    const members = await liveMembers(pgid);
    return members.length >= count ? members : pending({ members });
  });
}

const emptied = (pgid: number) =>
  waitFor(`group ${pgid} to be empty`, async () =>
    (await liveMembers(pgid)).length === 0 ? true : undefined,
  );

describe('retiring real shell groups', { timeout: 60_000 }, () => {
  let f: SidecarFixture;
  beforeEach(async () => {
    f = await startFixture();
  });
  afterEach(async () => {
    await f.dispose();
  });

  it('ends the subagent’s group and leaves the parent’s dev server running, pids and start times unchanged', async () => {
    const child = f.session('child');
    const parent = f.session('parent');
    const shell = await f.spawn(child, 't1', 'sleep 1000 & sleep 1000 & wait');
    const server = await f.spawn(parent, 'p1', 'sleep 1000 & wait');
    expect([shell.registration.kind, server.registration.kind]).toEqual(['Registered', 'Registered']);
    await membersAtLeast(shell.pid, 3);
    const before = await membersAtLeast(server.pid, 2);

    expect(await f.client.endTurn(completed(child, 't1'))).toEqual({
      decision: 'Retire',
      retire: `${child}/t1`,
      groups: 1,
    });
    expect(await f.retired(child, 't1')).toEqual([
      { id: `group:${shell.shell}`, state: { kind: 'Done', how: 'Exited' } },
    ]);

    expect(await liveMembers(shell.pid)).toEqual([]);
    const after = await liveMembers(server.pid);
    expect(after.map((s) => [s.pid, s.startTime])).toEqual(before.map((s) => [s.pid, s.startTime]));
    expect(f.sent.filter((s) => s.target === server.pid)).toEqual([]);
  });

  it('escalates to SIGKILL after the grace when the shell and its grandchild trap SIGTERM', async () => {
    const child = f.session('child');
    const shell = await f.spawn(child, 't1', "trap '' TERM; (trap '' TERM; exec sleep 1000) & wait");
    await membersAtLeast(shell.pid, 2);
    await f.client.endTurn(completed(child, 't1'));
    expect(await f.retired(child, 't1')).toEqual([
      { id: `group:${shell.shell}`, state: { kind: 'Done', how: 'Killed' } },
    ]);
    expect(await liveMembers(shell.pid)).toEqual([]);
    expect(f.sent.map((s) => s.signal)).toEqual(['SIGTERM', 'SIGCONT', 'SIGKILL']);
  });

  it('still sends SIGKILL when the leader dies on SIGTERM but a grandchild with redirected stdio traps it', async () => {
    const child = f.session('child');
    const shell = await f.spawn(child, 't1', "(trap '' TERM; exec sleep 1000) >/dev/null 2>&1 & wait");
    const [, grandchild] = await membersAtLeast(shell.pid, 2);
    await f.client.endTurn(completed(child, 't1'));
    expect((await f.retired(child, 't1'))[0]?.state).toEqual({ kind: 'Done', how: 'Killed' });
    expect(await isAlive(grandchild!.pid, grandchild!.startTime)).toBe(false);
  });

  it('reaches the members of a group whose leader already exited, signalling only the group', async () => {
    const child = f.session('child');
    // The leader exits only once the test opens the gate, so it is surely registered first.
    const gate = join(f.dir, 'gate');
    const shell = await f.spawn(
      child,
      't1',
      `sleep 1000 & sleep 1000 & while [ ! -e ${gate} ]; do sleep 0.05; done; exit 0`,
    );
    expect(shell.registration.kind).toBe('Registered');
    await writeFile(gate, '');
    await waitFor('the leader to exit', async () =>
      (await liveMembers(shell.pid)).some((m) => m.pid === shell.pid) ? undefined : true,
    );
    expect(await membersAtLeast(shell.pid, 2)).toHaveLength(2);
    await f.client.endTurn(completed(child, 't1'));
    expect((await f.retired(child, 't1'))[0]?.state).toEqual({ kind: 'Done', how: 'Exited' });
    expect(await liveMembers(shell.pid)).toEqual([]);
    expect(f.sent.filter((s) => s.kind !== 'Group' || s.target !== shell.pid)).toEqual([]);
  });

  it('sends SIGCONT after SIGTERM so a stopped member handles the TERM instead of waiting for SIGKILL', async () => {
    const child = f.session('child');
    const proof = join(f.dir, 'got-term');
    const shell = await f.spawn(
      child,
      't1',
      `(trap 'echo got-term > ${proof}; exit 0' TERM; kill -STOP $BASHPID; while :; do sleep 0.2; done) & trap '' TERM; wait`,
    );
    await waitFor('a stopped member', async () =>
      (await liveMembers(shell.pid)).some((m) => m.state === 'T') ? true : undefined,
    );
    await f.client.endTurn(completed(child, 't1'));
    await f.retired(child, 't1');
    expect(await readFile(proof, 'utf8')).toBe('got-term\n');
    expect(await liveMembers(shell.pid)).toEqual([]);
  });

  it('finds a setsid escapee by its marker and ends it; an escapee with a cleared environment is not found (known limit)', async () => {
    const child = f.session('child');
    const shell = await f.spawn(
      child,
      't1',
      'setsid sleep 1001 & setsid env -i sleep 1002 & sleep 1000 & wait',
    );
    await membersAtLeast(shell.pid, 2);
    const outside = await waitFor('both escapees', async () => {
      const found = (await procSnapshot()).filter(
        (s) => s.pgrp !== shell.pid && s.ppid === shell.pid && s.comm === 'sleep',
      );
      return found.length === 2 ? found : pending({ escapees: found });
    });
    for (const s of outside) f.track(s);
    await f.client.endTurn(completed(child, 't1'));
    const targets = await f.retired(child, 't1');
    expect(targets.map((t) => t.id.split(':')[0])).toEqual(['group', 'escapee']);
    const alive = await Promise.all(outside.map((s) => isAlive(s.pid, s.startTime)));
    const survivors = outside.filter((_, i) => alive[i]);
    const ended = outside.filter((_, i) => !alive[i]);
    expect(survivors).toHaveLength(1);
    // Only the marked escapee is signalled, on its own pid (SIGTERM, and SIGCONT if it was still alive).
    expect(new Set(f.sent.filter((s) => s.kind === 'Process').map((s) => s.target))).toEqual(
      new Set(ended.map((s) => s.pid)),
    );
    process.kill(survivors[0]!.pid, 'SIGKILL');
  });

  it('ends a job-control escape (set -m puts the child in its own group) found by its marker', async () => {
    const child = f.session('child');
    const shell = await f.spawn(child, 't1', 'set -m; sleep 1000 & wait');
    const job = await waitFor('the job in its own group', async () =>
      (await procSnapshot()).find((s) => s.ppid === shell.pid && s.pgrp !== shell.pid && s.comm === 'sleep'),
    );
    f.track(job);
    await f.client.endTurn(completed(child, 't1'));
    const targets = await f.retired(child, 't1');
    expect(targets.map((t) => [t.id.split(':')[0], t.state.kind])).toEqual([
      ['group', 'Done'],
      ['escapee', 'Done'],
    ]);
    expect(await isAlive(job.pid, job.startTime)).toBe(false);
  });

  it('answers duplicate turn ends once: a single sweep, one SIGTERM', async () => {
    const child = f.session('child');
    const shell = await f.spawn(child, 't1', 'sleep 1000');
    const answers = await Promise.all([
      f.client.endTurn(completed(child, 't1')),
      f.client.endTurn(completed(child, 't1')),
    ]);
    expect(answers.map((a) => a.decision)).toEqual(['Retire', 'Retire']);
    expect(answers.filter((a) => 'duplicate' in a)).toHaveLength(1);
    await f.retired(child, 't1');
    await emptied(shell.pid);
    expect(f.sent.filter((s) => s.signal === 'SIGTERM')).toHaveLength(1);
  });

  it('lets a resumed turn start shells again, untouched until that turn ends', async () => {
    const child = f.session('child');
    await f.spawn(child, 't1', 'sleep 1000');
    await f.client.endTurn(completed(child, 't1'));
    await f.retired(child, 't1');
    const resumed = await f.spawn(child, 't2', 'sleep 1000');
    expect(resumed.registration.kind).toBe('Registered');
    expect(await f.client.endTurn(completed(child, 't1'))).toMatchObject({ duplicate: true });
    expect(await membersAtLeast(resumed.pid, 1)).toHaveLength(1);
    await f.client.endTurn(completed(child, 't2'));
    await f.retired(child, 't2');
    await emptied(resumed.pid);
  });

  it('retires a shell registered after its turn ended (409 TurnEnded), never leaking it', async () => {
    const child = f.session('child');
    await f.client.endTurn(completed(child, 't1'));
    await f.retired(child, 't1');
    const late = await f.spawn(child, 't1', 'sleep 1000');
    expect(late.registration).toEqual({ kind: 'TurnEnded', shell: late.shell, retire: `${child}/t1` });
    await emptied(late.pid);
  });

  it('keeps the shells of failed turns and of root sessions', async () => {
    const child = f.session('child');
    const root = f.session('root');
    const failed = await f.spawn(child, 't1', 'sleep 1000');
    const rootShell = await f.spawn(root, 'r1', 'sleep 1000');
    expect(await f.client.endTurn({ ...completed(child, 't1'), phase: 'Failed' })).toEqual({
      decision: 'Keep',
      reason: 'TurnFailed',
    });
    expect(await f.client.endTurn({ ...completed(root, 'r1'), role: 'Root' })).toEqual({
      decision: 'Keep',
      reason: 'NotSubagent',
    });
    expect(await membersAtLeast(failed.pid, 1)).toHaveLength(1);
    expect(await membersAtLeast(rootShell.pid, 1)).toHaveLength(1);
    expect(f.sent).toEqual([]);
  });

  it('ends a group of 1,000 processes', async () => {
    const child = f.session('child');
    const shell = await f.spawn(child, 't1', 'for i in $(seq 1000); do sleep 1000 & done; wait');
    await waitFor(
      '1,000 members',
      async () => ((await liveMembers(shell.pid)).length >= 1001 ? true : undefined),
      60_000,
    );
    await f.client.endTurn(completed(child, 't1'));
    expect((await f.retired(child, 't1'))[0]?.state.kind).toBe('Done');
    await emptied(shell.pid);
  });
});
