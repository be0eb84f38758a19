/**
 * The sidecar as its own process (operator/cli/sidecar.ts), crashed with SIGKILL between SIGTERM and
 * SIGKILL of a retire, then started again: it resumes from the journal and finishes the retire.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReaperClient, spawnRegisteredShell } from '../../../operator/sidecar/host/index.ts';
import {
  journalEntrySchema,
  type JournalEntry,
} from '../../../operator/sidecar/process/ledger/journal-entries.ts';
import { killMarked, liveMembers, waitFor } from './fixtures/process-fixtures.ts';
import { pending } from '../../harness/eventually.ts';

const REPO = resolve(import.meta.dirname, '../../..');
const GRACE_SECONDS = 3;

describe('a sidecar restart mid-retire', { timeout: 90_000 }, () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const sidecars: ChildProcess[] = [];
  const prefix = `r${process.pid}`;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reaper-restart-'));
    env = {
      ...process.env,
      SANDBOX_REAPER_SOCKET: join(dir, 'reaper.sock'),
      SANDBOX_REAPER_STATE_DIR: join(dir, 'state'),
      SANDBOX_REAPER_OUTPUT_DIR: dir,
      SANDBOX_REAPER_GRACE_SECONDS: String(GRACE_SECONDS),
      SANDBOX_REAPER_POLL_MS: '50',
    };
  });
  afterEach(async () => {
    for (const sidecar of sidecars.splice(0))
      if (sidecar.exitCode === null && sidecar.signalCode === null) sidecar.kill('SIGKILL');
    await killMarked(prefix);
    await rm(dir, { recursive: true, force: true });
  });

  function startSidecar(): { process: ChildProcess; log: string[] } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'operator/cli/sidecar.ts'], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log: string[] = [];
    child.stdout.on('data', (chunk: Buffer) =>
      log.push(...chunk.toString('utf8').split('\n').filter(Boolean)),
    );
    child.stderr.on('data', (chunk: Buffer) => log.push(chunk.toString('utf8')));
    sidecars.push(child);
    return { process: child, log };
  }

  async function journal(): Promise<JournalEntry[]> {
    const text = await readFile(join(dir, 'state', 'journal.jsonl'), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => {
        const parsed = journalEntrySchema.safeParse(JSON.parse(line));
        return parsed.success ? [parsed.data] : [];
      });
  }

  const states = (entries: readonly JournalEntry[]) =>
    entries.flatMap((e) => (e.type === 'TargetUpdated' ? [e.progress.state] : []));

  it('resumes from the journal: the group that traps SIGTERM is killed after the grace, by the new process', async () => {
    const client = createReaperClient({ socketPath: join(dir, 'reaper.sock') });
    const first = startSidecar();
    await waitFor('the first sidecar', async () => ((await client.health()) ? true : undefined));
    const session = `${prefix}-child`;
    const shell = await spawnRegisteredShell({
      client,
      session,
      turn: 't1',
      command: "trap '' TERM; sleep 1000 & wait",
    });
    expect(shell.registration.kind).toBe('Registered');
    await waitFor('the shell to fork', async () =>
      (await liveMembers(shell.pid)).length >= 2 ? true : undefined,
    );

    await client.endTurn({ session, turn: 't1', phase: 'Completed', role: 'Subagent' });
    await waitFor('SIGTERM to be journaled', async () =>
      states(await journal()).some((s) => s.kind === 'Continuing') ? true : undefined,
    );
    first.process.kill('SIGKILL');
    await waitFor('the first sidecar to die', () =>
      Promise.resolve(
        first.process.exitCode !== null || first.process.signalCode !== null ? true : undefined,
      ),
    );
    expect((await liveMembers(shell.pid)).map((m) => m.pid)).toContain(shell.pid);
    expect(states(await journal()).some((s) => s.kind === 'Killing')).toBe(false);

    const second = startSidecar();
    await waitFor(
      'the group to be empty',
      async () => {
        const members = await liveMembers(shell.pid);
        return members.length === 0 ? true : pending({ members });
      },
      60_000,
    );
    const finalStates = await waitFor('the retire to finish in the journal', async () => {
      const entries = await journal();
      return entries.some((e) => e.type === 'RetireFinished')
        ? states(entries)
        : pending({ journal: entries.map((e) => e.type) });
    });
    expect(finalStates.at(-1)).toEqual({ kind: 'Done', how: 'Killed' });
    const killing = finalStates.find((s) => s.kind === 'Killing');
    expect(killing?.kind === 'Killing' && killing.killedAt - killing.signalledAt).toBeGreaterThanOrEqual(
      GRACE_SECONDS * 1000,
    );
    await waitFor('the resume to be logged', () =>
      Promise.resolve(second.log.some((l) => l.includes('resuming a retire')) ? true : undefined),
    );
    expect(await client.endTurn({ session, turn: 't1', phase: 'Completed', role: 'Subagent' })).toMatchObject(
      { duplicate: true },
    );
  });

  it('stops on SIGTERM (pod termination) mid-retire without losing it: the next start finishes the retire', async () => {
    const client = createReaperClient({ socketPath: join(dir, 'reaper.sock') });
    const first = startSidecar();
    await waitFor('the first sidecar', async () => ((await client.health()) ? true : undefined));
    const session = `${prefix}-child2`;
    const shell = await spawnRegisteredShell({
      client,
      session,
      turn: 't1',
      command: "trap '' TERM; sleep 1000 & wait",
    });
    await waitFor('the shell to fork', async () =>
      (await liveMembers(shell.pid)).length >= 2 ? true : undefined,
    );
    await client.endTurn({ session, turn: 't1', phase: 'Completed', role: 'Subagent' });
    await waitFor('SIGTERM to be journaled', async () =>
      states(await journal()).some((s) => s.kind === 'Continuing') ? true : undefined,
    );

    first.process.kill('SIGTERM');
    const code = await waitFor('the first sidecar to exit', () =>
      Promise.resolve(first.process.exitCode ?? undefined),
    );
    expect(code).toBe(0);
    expect(first.log.some((l) => l.includes('left to the journal'))).toBe(true);
    expect((await liveMembers(shell.pid)).map((m) => m.pid)).toContain(shell.pid);

    startSidecar();
    await waitFor(
      'the group to be empty',
      async () => {
        const members = await liveMembers(shell.pid);
        return members.length === 0 ? true : pending({ members });
      },
      60_000,
    );
    const finished = await waitFor('the retire to finish', async () => {
      const entries = await journal();
      return entries.find((e) => e.type === 'RetireFinished');
    });
    expect(finished).toMatchObject({ key: `${session}/t1`, summary: { retiredGroups: 1, killedGroups: 1 } });
  });
});
