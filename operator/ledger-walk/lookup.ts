/** One locator lookup for one session of an owner, capped; classifies the result into a session finding. */
import { describeError, withDeadline } from './deadline.ts';
import { sessionFinding, sessionOfOwner, type SessionFinding } from './owner-verdict.ts';
import type { Clock, LedgerOwner, ReconciliationTarget, RuntimeLocator } from './ports.ts';

/** Undefined when the walk cancelled the lookup (the walk is decided, so it no longer matters). */
export async function lookupSession(
  locator: RuntimeLocator,
  owner: LedgerOwner,
  session: string,
  target: ReconciliationTarget,
  clock: Clock,
  capMs: number,
  cancel: AbortSignal,
): Promise<SessionFinding | undefined> {
  const result = await withDeadline((signal) => locator.locate(session, signal), clock, capMs, cancel);
  switch (result.kind) {
    case 'Cancelled':
      return undefined;
    case 'TimedOut':
      return {
        kind: 'Incomplete',
        owner: owner.session,
        cause: 'Timeout',
        reason: `lookup of ${sessionOfOwner(owner, session)} timed out after ${capMs} ms`,
      };
    case 'Failed':
      return {
        kind: 'Incomplete',
        owner: owner.session,
        cause: 'LookupFailed',
        reason: `lookup of ${sessionOfOwner(owner, session)} failed: ${describeError(result.error)}`,
      };
    case 'Done':
      return sessionFinding(owner, session, result.value, target);
  }
}
