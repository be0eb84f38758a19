/**
 * The ledger's one writer while the sidecar runs: an entry is applied to the ledger, then appended to the
 * journal durably, and callers act (signal) only after it resolves. Applying first means a compaction
 * running meanwhile rewrites the journal with the entry included. The reaper, its shell monitor and the
 * retire driver share it, so none of them writes the ledger through another.
 */
import type { Logger } from 'pino';
import type { Journal } from '../os/ports.ts';
import type { JournalEntry } from './journal-entries.ts';
import { applyEntry, type Ledger } from './shell-ledger.ts';

export type LedgerRecorder = (entry: JournalEntry) => Promise<void>;

export function ledgerRecorder(
  ledger: Ledger,
  journal: Journal<JournalEntry>,
  logger: Logger,
): LedgerRecorder {
  return async (entry) => {
    applyEntry(ledger, entry);
    try {
      await journal.append(entry);
    } catch (error) {
      // Acting without the journal beats leaking shells; a restart then forgets this step.
      logger.error(
        { err: error, entry: entry.type },
        'journal append failed; acting on the in-memory ledger anyway',
      );
    }
  };
}
