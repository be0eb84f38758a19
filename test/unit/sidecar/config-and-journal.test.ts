import { mkdtemp, readFile, rm, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS, loadConfig } from '../../../operator/sidecar/contract/config.ts';
import {
  journalEntrySchema,
  type JournalEntry,
} from '../../../operator/sidecar/process/ledger/journal-entries.ts';
import { createJsonlJournal } from '../../../operator/sidecar/process/os/jsonl-journal.ts';
import { shellsStatusOf } from '../../../operator/sidecar/process/kube/status-reporter.ts';
import { shellsSchema } from '../../../operator/api/session-reference.ts';

describe('sidecar configuration', () => {
  it('defaults to the documented values', () => {
    expect(loadConfig({})).toEqual({
      socket: CONFIG_DEFAULTS.socket,
      socketMode: 0o660,
      stateDir: '/var/lib/sandbox-reaper',
      outputDir: '/var/run/sandbox-reaper-output',
      graceSeconds: 5,
      killTimeoutSeconds: 5,
      noticeHoldMs: 1000,
      pollMs: 500,
      logLevel: 'info',
    });
  });

  it('reads the grace period the controller injects, and names a bad variable', () => {
    expect(loadConfig({ SANDBOX_REAPER_GRACE_SECONDS: '30' }).graceSeconds).toBe(30);
    expect(() => loadConfig({ SANDBOX_REAPER_GRACE_SECONDS: '0' })).toThrow(/SANDBOX_REAPER_GRACE_SECONDS/);
    expect(() => loadConfig({ SANDBOX_REAPER_GRACE_SECONDS: '5.5' })).toThrow(/SANDBOX_REAPER_GRACE_SECONDS/);
    expect(() => loadConfig({ SANDBOX_REAPER_SOCKET: 'relative.sock' })).toThrow(/SANDBOX_REAPER_SOCKET/);
  });
});

describe('JSONL journal', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reaper-journal-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const entry = (shell: string): JournalEntry => ({ type: 'ShellExited', at: '2026-01-01T00:00:00Z', shell });

  it('replays what it appended, in order, and nothing when the file is absent', async () => {
    const journal = createJsonlJournal(join(dir, 'j.jsonl'), journalEntrySchema);
    expect(await journal.replay()).toEqual({ entries: [], skipped: 0 });
    await journal.append(entry('a'));
    await journal.append(entry('b'));
    expect(await createJsonlJournal(join(dir, 'j.jsonl'), journalEntrySchema).replay()).toEqual({
      entries: [entry('a'), entry('b')],
      skipped: 0,
    });
    await journal.close();
  });

  it('skips and counts a torn last line and foreign lines instead of failing', async () => {
    const path = join(dir, 'j.jsonl');
    const journal = createJsonlJournal(path, journalEntrySchema);
    await journal.append(entry('a'));
    await appendFile(path, '{"type":"Shell\n{"type":"Unknown"}\n');
    expect(await journal.replay()).toEqual({ entries: [entry('a')], skipped: 2 });
    await journal.close();
  });

  it('rewrites atomically and keeps appending after the rewrite', async () => {
    const path = join(dir, 'j.jsonl');
    const journal = createJsonlJournal(path, journalEntrySchema);
    await journal.append(entry('a'));
    await journal.rewrite([entry('b')]);
    await journal.append(entry('c'));
    expect(await readFile(path, 'utf8')).toBe(
      `${JSON.stringify(entry('b'))}\n${JSON.stringify(entry('c'))}\n`,
    );
    await journal.close();
  });
});

describe('status.shells', () => {
  it('writes what the API schema accepts: turn, groups, unreachable, time and message', () => {
    const status = shellsStatusOf({
      session: 's',
      turn: 't-7',
      finishedAt: '2026-01-01T00:00:00.000Z',
      summary: {
        retiredGroups: 3,
        killedGroups: 1,
        escapees: 0,
        unreachable: 1,
        unreachablePids: [9],
        message: 'x'.repeat(2000),
      },
    });
    expect(shellsSchema.parse(status)).toEqual({ ...status, message: 'x'.repeat(1024) });
    expect(status).toMatchObject({ retiredTurn: 't-7', retiredGroups: 3, unreachable: 1 });
  });
});
