import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JournalEntry } from '../../../operator/sidecar/process/ledger/journal-entries.ts';
import {
  createNoticeOutbox,
  type NewNotice,
} from '../../../operator/sidecar/process/notices/notice-outbox.ts';
import { FakeJournal } from './fakes/fake-journal.ts';
import { FakeClock } from './fakes/fake-world.ts';

const notice = (shell: string, dueAt: number): NewNotice => ({
  kind: 'Exit',
  shell,
  session: 's',
  turn: 't',
  at: '2026-01-01T00:00:00.000Z',
  dueAt,
});

describe('notice outbox', () => {
  let journal: FakeJournal<JournalEntry>;
  let clock: FakeClock;
  const make = () => createNoticeOutbox(journal, clock, pino({ level: 'silent' }));
  beforeEach(() => {
    journal = new FakeJournal();
    clock = new FakeClock(0);
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('numbers notices, hands out due ones after the cursor, and forgets them once acknowledged', async () => {
    const outbox = make();
    await outbox.publish(notice('a', 0));
    await outbox.publish(notice('b', 0));
    const page = await outbox.read(0, 0, new AbortController().signal);
    expect(page).toMatchObject({ notices: [{ seq: 1 }, { seq: 2 }], cursor: 2 });
    expect(await outbox.read(2, 0, new AbortController().signal)).toEqual({ notices: [], cursor: 2 });
    expect(journal.entries.filter((e) => e.type === 'NoticesAcked')).toEqual([
      { type: 'NoticesAcked', upTo: 2 },
    ]);
  });

  it('long-polls: a read waits for the next publish and returns it', async () => {
    const outbox = make();
    const reading = outbox.read(0, 30_000, new AbortController().signal);
    await outbox.publish(notice('a', 0));
    expect((await reading).notices).toMatchObject([{ shell: 'a' }]);
  });

  it('wakes a waiting read when a held notice falls due', async () => {
    const outbox = make();
    await outbox.publish(notice('a', 1_000));
    const reading = outbox.read(0, 30_000, new AbortController().signal);
    clock.monotonic = 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await reading).notices).toMatchObject([{ shell: 'a' }]);
  });

  it('returns empty when the wait runs out or the reader goes away', async () => {
    const outbox = make();
    const abort = new AbortController();
    const reading = outbox.read(0, 30_000, abort.signal);
    abort.abort();
    expect(await reading).toEqual({ notices: [], cursor: 0 });
  });

  it('drops a shell’s unacknowledged notices durably, including due ones', async () => {
    const outbox = make();
    await outbox.publish(notice('a', 0));
    await outbox.publish(notice('b', 0));
    expect(await outbox.dropShells(['a'])).toBe(1);
    expect((await outbox.read(0, 0, new AbortController().signal)).notices).toMatchObject([{ shell: 'b' }]);
    const restored = make();
    restored.restore(journal.entries);
    expect((await restored.read(0, 0, new AbortController().signal)).notices).toMatchObject([{ shell: 'b' }]);
  });

  it('keeps numbering past dropped notices after compaction, so a host cursor never skips a new one', async () => {
    const outbox = make();
    await outbox.publish(notice('a', 0));
    await outbox.publish(notice('b', 0));
    await outbox.dropShells(['a', 'b']);
    const compacted = make();
    compacted.restore(outbox.snapshot());
    expect((await compacted.publish(notice('c', 0))).seq).toBe(3);
  });
  it('acknowledges only notices it handed out: a cursor beyond them deletes nothing (issue 12)', async () => {
    const outbox = make();
    await outbox.publish(notice('a', 0));
    await outbox.publish(notice('b', 0));
    // A hostile (or confused) reader acknowledges "everything" before the host has read a single notice:
    // the cursor is clamped to what was handed out (nothing), so nothing is acknowledged.
    const early = await outbox.read(Number.MAX_SAFE_INTEGER, 0, new AbortController().signal);
    expect(early.notices.map((n) => n.shell)).toEqual(['a', 'b']);
    expect(journal.entries.filter((e) => e.type === 'NoticesAcked')).toEqual([]);
    const page = await outbox.read(0, 0, new AbortController().signal);
    expect(page.notices.map((n) => n.shell)).toEqual(['a', 'b']);
    // Acknowledging what was handed out still forgets it.
    await outbox.read(page.cursor, 0, new AbortController().signal);
    expect((await outbox.read(0, 0, new AbortController().signal)).notices).toEqual([]);
  });
});
