/** The ledger call of the walk, capped, with failures as values. */
import { describeError, withDeadline } from './deadline.ts';
import type { IncompleteReason } from '../api/reconciliation-outcome.ts';
import type { Clock, LedgerReport, ReconciliationTarget, SessionLedger } from './ports.ts';

export type LedgerCall =
  LedgerReport | { readonly kind: 'Incomplete'; readonly cause: IncompleteReason; readonly reason: string };

export async function callLedger(
  ledger: SessionLedger,
  target: ReconciliationTarget,
  clock: Clock,
  capMs: number,
): Promise<LedgerCall> {
  const result = await withDeadline((signal) => ledger.owners(target, signal), clock, capMs);
  switch (result.kind) {
    case 'Done':
      return result.value;
    case 'TimedOut':
      return { kind: 'Incomplete', cause: 'Timeout', reason: `ledger call timed out after ${capMs} ms` };
    case 'Failed':
      return {
        kind: 'Incomplete',
        cause: 'LedgerFailed',
        reason: `ledger call failed: ${describeError(result.error)}`,
      };
  }
}
