/** One locator lookup for one owner, capped; classifies the result into an owner verdict. */
import { describeError, withDeadline } from './deadline.ts';
import { lookupVerdict, type OwnerVerdict } from './owner-verdict.ts';
import type { Clock, LedgerOwner, ReconciliationTarget, RuntimeLocator } from './ports.ts';

/** Undefined when the walk was cancelled (its verdict no longer matters). */
export async function lookupOwner(
  locator: RuntimeLocator,
  owner: LedgerOwner,
  target: ReconciliationTarget,
  clock: Clock,
  capMs: number,
  walk: AbortSignal,
): Promise<OwnerVerdict | undefined> {
  const result = await withDeadline((signal) => locator.locate(owner.session, signal), clock, capMs, walk);
  switch (result.kind) {
    case 'Cancelled':
      return undefined;
    case 'TimedOut':
      return {
        kind: 'Incomplete',
        owner: owner.session,
        cause: 'Timeout',
        reason: `lookup of ${owner.session} timed out after ${capMs} ms`,
      };
    case 'Failed':
      return {
        kind: 'Incomplete',
        owner: owner.session,
        cause: 'LookupFailed',
        reason: `lookup of ${owner.session} failed: ${describeError(result.error)}`,
      };
    case 'Done':
      return lookupVerdict(owner, result.value, target);
  }
}
