/**
 * Every file the sidecar keeps stays bounded however long it runs (issue 12): the journal is compacted
 * while running, not only at start, and an output file is truncated at its cap while its shell keeps
 * appending. Real files; the process world is the fake one so thousands of turns run in seconds.
 */
import { open, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { journalEntrySchema } from '../../../operator/sidecar/process/ledger/journal-entries.ts';
import { createJsonlJournal } from '../../../operator/sidecar/process/os/jsonl-journal.ts';
import { createNoticeOutbox } from '../../../operator/sidecar/process/notices/notice-outbox.ts';
import { createOutputTail } from '../../../operator/sidecar/process/os/output-tail.ts';
import { ShellReaper } from '../../../operator/sidecar/process/reaper.ts';
import { FakeClock, FakeWorld } from './fakes/fake-world.ts';
import { completed, OPTIONS, RecordingReporter, spawnShell } from './fakes/reaper-setup.ts';

const TURNS = 6_000;
const JOURNAL_BOUND_BYTES = 4 * 1024 * 1024;

describe('bounded files', { timeout: 300_000 }, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reaper-bounds-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(`keeps the journal under ${JOURNAL_BOUND_BYTES} bytes across ${TURNS} retired subagent turns`, async () => {
    const world = new FakeWorld();
    const clock = new FakeClock();
    const logger = pino({ level: 'silent' });
    const path = join(dir, 'journal.jsonl');
    const journal = createJsonlJournal(path, journalEntrySchema);
    const outbox = createNoticeOutbox(journal, clock, logger);
    const reporter = new RecordingReporter();
    const reaper = new ShellReaper({
      table: world,
      signaller: world,
      journal,
      outbox,
      clock,
      reporter,
      logger,
      options: OPTIONS,
    });
    await reaper.start();
    let largest = 0;
    for (let i = 0; i < TURNS; i += 1) {
      const shell = spawnShell(world, 'child', `t${i}`, `sh${i}`);
      await reaper.register(shell.request);
      await reaper.endTurn(completed('child', `t${i}`));
      await reaper.settled();
      world.reapZombies();
      if (i % 500 === 0) largest = Math.max(largest, (await stat(path)).size);
    }
    largest = Math.max(largest, (await stat(path)).size);
    expect(reporter.retired).toHaveLength(TURNS);
    expect(largest).toBeLessThan(JOURNAL_BOUND_BYTES);
    // Compaction kept what idempotency needs: the latest turn end is still a duplicate after a restart.
    await reaper.stop(0);
    const again = new ShellReaper({
      table: world,
      signaller: world,
      journal,
      outbox: createNoticeOutbox(journal, clock, logger),
      clock,
      reporter,
      logger,
      options: OPTIONS,
    });
    await again.start();
    expect(await again.endTurn(completed('child', `t${TURNS - 1}`))).toMatchObject({ kind: 'Duplicate' });
    await journal.close();
  });

  it('truncates an output file at its cap while the shell keeps appending, and still matches new lines', async () => {
    const cap = 64 * 1024;
    const tail = createOutputTail(dir, cap);
    const file = await open(join(dir, 'sh1.log'), 'a');
    const chunk = `${'x'.repeat(4095)}\n`;
    let largest = 0;
    try {
      for (let i = 0; i < 2_500; i += 1) {
        await file.write(chunk);
        if (i % 4 === 0) await tail.bound('sh1');
        largest = Math.max(largest, (await stat(join(dir, 'sh1.log'))).size);
      }
      expect(largest).toBeLessThanOrEqual(cap + 4 * chunk.length);
      await tail.bound('sh1');
      await tail.nextLines('sh1');
      await file.write('server ready on :3000\n');
      expect(await tail.nextLines('sh1')).toContain('server ready on :3000');
    } finally {
      await file.close();
    }
    await tail.forget('sh1');
    await expect(stat(join(dir, 'sh1.log'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
