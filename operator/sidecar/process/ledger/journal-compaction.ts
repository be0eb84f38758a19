/**
 * Keeps the journal bounded while the sidecar runs (issue 12), not only at start: once enough entries
 * were appended, the ledger is pruned (shell-ledger.ts says what is kept) and the journal rewritten from it
 * and the outbox. The reaper runs this under its lock.
 */
import type { JournalEntry } from './journal-entries.ts';
import type { Journal } from '../os/ports.ts';
import { compactLedger, pruneLedger, type Ledger } from './shell-ledger.ts';

/** The journal is rewritten from the bounded ledger once this many entries were appended. */
export const COMPACT_AFTER_APPENDS = 4_096;

export const journalGrown = (journal: Journal<JournalEntry>): boolean =>
  journal.appendsSinceRewrite() >= COMPACT_AFTER_APPENDS;

export async function compactJournal(
  journal: Journal<JournalEntry>,
  ledger: Ledger,
  // The notice outbox's entries (notices/notice-outbox.ts), named by shape: the ledger imports nothing above it.
  outbox: { snapshot(): JournalEntry[] },
): Promise<void> {
  pruneLedger(ledger);
  await journal.rewrite([...compactLedger(ledger), ...outbox.snapshot()]);
}
