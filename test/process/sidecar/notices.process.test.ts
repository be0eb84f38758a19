/** The notice channel with real shells: exit and match notices, and silence for retired groups. */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Notice } from '../../../operator/sidecar/contract/notice.ts';
import { liveMembers, startFixture, waitFor, type SidecarFixture } from './fixtures/process-fixtures.ts';

describe('shell notices from real shells', { timeout: 60_000 }, () => {
  let f: SidecarFixture;
  /** The host's cursor: each read acknowledges what the previous ones returned. */
  let cursor: number;
  beforeEach(async () => {
    f = await startFixture();
    cursor = 0;
  });
  afterEach(async () => {
    await f.dispose();
  });

  /** Reads notices until `done` holds or the deadline passes; returns everything read. */
  async function readUntil(
    done: (all: readonly Notice[]) => boolean,
    waitMs = 1_000,
    rounds = 20,
  ): Promise<Notice[]> {
    const all: Notice[] = [];
    for (let i = 0; i < rounds && !done(all); i += 1) {
      const page = await f.client.readNotices(cursor, waitMs);
      all.push(...page.notices);
      cursor = page.cursor;
    }
    return all;
  }

  it('registers a shell that exits at once (the spawn gate holds it) and publishes its exit notice', async () => {
    const parent = f.session('parent');
    const quick = await f.spawn(parent, 'p1', 'true');
    expect(quick.registration.kind).toBe('Registered');
    const notices = await readUntil((all) => all.length > 0);
    expect(notices).toMatchObject([{ kind: 'Exit', shell: quick.shell, session: parent, turn: 'p1' }]);
  });

  it('publishes one match notice for the first complete output line containing the literal', async () => {
    const parent = f.session('parent');
    const dev = await f.spawn(
      parent,
      'p1',
      "echo compiling; echo 'ready on :3000'; echo 'ready again'; sleep 1000",
      'ready',
    );
    const notices = await readUntil((all) => all.length > 0);
    expect(notices).toMatchObject([{ kind: 'Match', shell: dev.shell, line: 'ready on :3000' }]);
    expect(await readUntil(() => false, 300, 3)).toEqual([]);
  });

  it('publishes nothing for a retired group: neither its exit nor a match printed as it dies', async () => {
    const child = f.session('child');
    const shell = await f.spawn(
      child,
      't1',
      "trap 'echo ready-at-term; exit 0' TERM; sleep 1000 & wait",
      'ready',
    );
    await waitFor('the shell to run', async () =>
      (await liveMembers(shell.pid)).length >= 2 ? true : undefined,
    );
    await f.client.endTurn({ session: child, turn: 't1', phase: 'Completed', role: 'Subagent' });
    await f.retired(child, 't1');
    expect(await readUntil(() => false, 500, 4)).toEqual([]);
  });

  it('never runs the command of a shell spawned after its turn ended', async () => {
    const child = f.session('child');
    await f.client.endTurn({ session: child, turn: 't1', phase: 'Completed', role: 'Subagent' });
    await f.retired(child, 't1');
    const witness = join(f.dir, 'ran');
    const late = await f.spawn(child, 't1', `touch ${witness}; sleep 1000`);
    expect(late.registration.kind).toBe('TurnEnded');
    await waitFor('the late shell to be gone', async () =>
      (await liveMembers(late.pid)).length === 0 ? true : undefined,
    );
    await expect(access(witness)).rejects.toThrow(/ENOENT/);
  });
});
