/**
 * The account shape the legacy walk is sized for (docs/benchmarks.md): 540 root owners, 522 of them legacy
 * (`agent_*`, no worktree) and 18 that may be control-plane (`workspace_*` with a worktree), each lookup
 * answering after ~57 ms.
 */
import type {
  LedgerOwner,
  RuntimeLocation,
  RuntimeLocator,
  SessionLedger,
} from '../../../operator/ledger-walk/index.ts';

export const LOOKUP_LATENCY_MS = 57;
export const LEGACY_OWNERS = 522;
export const CONTROL_PLANE_OWNERS = 18;

export const target = { namespace: 'bench', sandbox: 'sbx-bench', provider: 'kubernetes', worktree: 'wt-0' };

export function accountOwners(): LedgerOwner[] {
  const legacy = Array.from({ length: LEGACY_OWNERS }, (_, i): LedgerOwner => ({
    session: `agent_${i}`,
    sessions: [`agent_${i}`],
    worktree: undefined,
    // Some legacy owners have allocations, none of them of the target sandbox.
    allocation: i % 3 === 0 ? { sandbox: `sbx-legacy-${i}`, provider: 'kubernetes' } : undefined,
  }));
  const control = Array.from({ length: CONTROL_PLANE_OWNERS }, (_, i): LedgerOwner => ({
    session: `workspace_${i}`,
    sessions: [`workspace_${i}`],
    worktree: `wt-${i}`,
    allocation: undefined,
  }));
  // Interleave, as an account's history would be.
  return [...legacy.slice(0, 261), ...control, ...legacy.slice(261)];
}

/** Every lookup answers after the measured latency: the owner holds another sandbox, or none. */
export class SimulatedLocator implements RuntimeLocator {
  lookups = 0;
  locate(session: string, signal: AbortSignal): Promise<RuntimeLocation> {
    this.lookups += 1;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        resolve(
          session.startsWith('workspace_')
            ? { kind: 'Located', sandbox: `sbx-${session}`, provider: 'kubernetes', worktree: undefined }
            : { kind: 'NotAllocated' },
        );
      }, LOOKUP_LATENCY_MS);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new Error('aborted'));
      });
    });
  }
}

export const accountLedger = (owners: readonly LedgerOwner[]): SessionLedger => ({
  owners: () => Promise.resolve({ kind: 'Owners', owners }),
});

/** The old serial walk: one lookup per owner, one after another, no budget (the baseline). */
export async function serialWalk(owners: readonly LedgerOwner[], locator: RuntimeLocator): Promise<number> {
  const signal = new AbortController().signal;
  let located = 0;
  for (const owner of owners) {
    const location = await locator.locate(owner.session, signal);
    if (location.kind === 'Located') located += 1;
  }
  return located;
}
