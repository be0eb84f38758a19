/**
 * The journaled notice outbox. Notices are numbered, held until due (an exit notice waits a short hold so
 * a turn end racing the exit can still drop it — docs/sidecar.md, failure plan case 19), handed to the host by a
 * long-poll, and forgotten once acknowledged. Drops and acks are journaled, so a restart neither loses a
 * notice nor re-delivers a dropped one (case 20).
 */
import type { Notice, NoticePage } from '../../contract/notice.ts';
import type { JournalEntry } from '../ledger/journal-entries.ts';
import type { Logger } from 'pino';
import type { Clock, Journal } from '../os/ports.ts';

/** A notice before the outbox numbers it. */
export type NewNotice = Omit<Notice, 'seq'>;

/**
 * The host's notice channel (exit and match notices). Retiring a shell drops its notices first, and the
 * fence keeps new ones from being published, so a retired shell never reopens a finished subagent.
 */
export interface NoticeOutbox {
  publish(notice: NewNotice): Promise<Notice>;
  /** Drops every unacknowledged notice of these shells (durably), returning how many there were. */
  dropShells(shells: readonly string[]): Promise<number>;
  /** Acknowledges notices up to `after`, then returns due ones after it, waiting up to `waitMs` for one. */
  read(after: number, waitMs: number, abort: AbortSignal): Promise<NoticePage>;
}

/** Notices kept unacknowledged at most; beyond it the oldest are dropped (a host that never reads). */
const OUTBOX_MAX = 10_000;

export interface JournaledOutbox extends NoticeOutbox {
  /** Rebuilds the outbox from replayed journal entries (other entry types are ignored). */
  restore(entries: readonly JournalEntry[]): void;
  /** Entries that rebuild the outbox, for compaction. */
  snapshot(): JournalEntry[];
  /** Wakes every waiting reader (shutdown). */
  close(): void;
}

export function createNoticeOutbox(
  journal: Journal<JournalEntry>,
  clock: Clock,
  logger: Logger,
): JournaledOutbox {
  const notices = new Map<number, Notice>();
  let nextSeq = 1;
  let ackedUpTo = 0;
  /** The highest seq a read returned: a cursor can acknowledge only what was handed out (issue 12). */
  let handedOutUpTo = 0;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };

  const apply = (entry: JournalEntry): void => {
    switch (entry.type) {
      case 'NoticePublished':
        if (entry.notice.seq > ackedUpTo) notices.set(entry.notice.seq, entry.notice);
        nextSeq = Math.max(nextSeq, entry.notice.seq + 1);
        return;
      case 'NoticesDropped': {
        const shells = new Set(entry.shells);
        for (const [seq, n] of notices) if (shells.has(n.shell)) notices.delete(seq);
        return;
      }
      case 'NoticesAcked':
        ackedUpTo = Math.max(ackedUpTo, entry.upTo);
        handedOutUpTo = Math.max(handedOutUpTo, ackedUpTo);
        nextSeq = Math.max(nextSeq, ackedUpTo + 1, entry.nextSeq ?? 0);
        for (const seq of notices.keys()) if (seq <= ackedUpTo) notices.delete(seq);
        return;
      case 'ShellRegistered':
      case 'ShellExited':
      case 'ShellMatched':
      case 'TurnEnded':
      case 'RetireFenced':
      case 'TargetUpdated':
      case 'RetireFinished':
        return;
    }
  };

  /** Applies, then journals (so a compaction meanwhile includes it). A journal failure is logged and the
   * outbox acts anyway: a dropped notice must be dropped now, even if a restart could resurrect it. */
  const record = async (entry: JournalEntry): Promise<void> => {
    apply(entry);
    try {
      await journal.append(entry);
    } catch (error) {
      logger.error({ err: error, entry: entry.type }, 'notice journal append failed; acting in memory');
    }
  };

  const due = (after: number): Notice[] => {
    const now = clock.now();
    return [...notices.values()].filter((n) => n.seq > after && n.dueAt <= now);
  };
  const nextDueIn = (after: number): number | undefined => {
    const now = clock.now();
    const pending = [...notices.values()].filter((n) => n.seq > after && n.dueAt > now);
    return pending.length === 0 ? undefined : Math.min(...pending.map((n) => n.dueAt - now));
  };

  return {
    async publish(notice: NewNotice) {
      const numbered: Notice = { ...notice, seq: nextSeq };
      nextSeq += 1;
      await record({ type: 'NoticePublished', notice: numbered });
      if (notices.size > OUTBOX_MAX) {
        const oldest = Math.min(...notices.keys());
        await record({ type: 'NoticesAcked', upTo: oldest });
      }
      wake();
      return numbered;
    },
    async dropShells(shells) {
      const set = new Set(shells);
      const count = [...notices.values()].filter((n) => set.has(n.shell)).length;
      await record({ type: 'NoticesDropped', shells: [...shells] });
      return count;
    },
    async read(after, waitMs, abort): Promise<NoticePage> {
      // A cursor beyond the notices handed out (a hostile `after=<huge>`, or a host cursor from before a
      // restart) acknowledges only those: at worst a notice is delivered twice, never deleted unread.
      const upTo = Math.min(after, handedOutUpTo);
      if (upTo > ackedUpTo) {
        await record({ type: 'NoticesAcked', upTo });
      }
      after = Math.max(upTo, ackedUpTo);
      const deadline = clock.now() + waitMs;
      for (;;) {
        const ready = due(after);
        const remaining = deadline - clock.now();
        if (ready.length > 0 || remaining <= 0 || abort.aborted) {
          handedOutUpTo = Math.max(handedOutUpTo, ready.at(-1)?.seq ?? 0);
          return { notices: ready, cursor: ready.at(-1)?.seq ?? after };
        }
        const wait = Math.min(remaining, nextDueIn(after) ?? remaining);
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            waiters.delete(done);
            abort.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, wait);
          waiters.add(done);
          abort.addEventListener('abort', done);
        });
      }
    },
    restore(entries) {
      for (const entry of entries) apply(entry);
    },
    snapshot() {
      return [
        { type: 'NoticesAcked', upTo: ackedUpTo, nextSeq },
        ...[...notices.values()].map((notice): JournalEntry => ({ type: 'NoticePublished', notice })),
      ];
    },
    close: wake,
  };
}
