import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  earnsMarker,
  reconcileSandboxReferences,
  systemClock,
  type LedgerOwner,
  type ReconciliationOutcome,
} from '../../../operator/ledger-walk/index.ts';
import {
  inAnotherSandbox,
  located,
  owner,
  ScriptedLedger,
  ScriptedLocator,
  type Script,
} from './scripted.ts';

const target = { namespace: 'team-a', sandbox: 'sbx-a', provider: 'kubernetes', worktree: 'wt-1' };

async function walk(owners: LedgerOwner[], scripts: [string, Script][], ledgerLatencyMs = 44) {
  const locator = new ScriptedLocator(new Map(scripts));
  const ledger = new ScriptedLedger({ kind: 'Owners', owners }, ledgerLatencyMs);
  const started = Date.now();
  const pending = reconcileSandboxReferences({ target, ledger, locator, clock: systemClock });
  await vi.runAllTimersAsync();
  const outcome = await pending;
  return { outcome, locator, elapsed: Date.now() - started };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('reconcileSandboxReferences', () => {
  it('completes, and earns the marker, when no owner holds the sandbox foreignly', async () => {
    const { outcome, locator } = await walk(
      [owner('workspace_1', { worktree: 'wt-1' }), owner('workspace_2')],
      [
        ['workspace_1', { latencyMs: 57, answer: located('sbx-a', 'wt-1') }],
        ['workspace_2', { latencyMs: 57, answer: located('sbx-other', undefined) }],
      ],
    );
    expect(outcome).toMatchObject({ kind: 'Complete', stats: { owners: 2, lookedUp: 2, skippedLegacy: 0 } });
    expect(earnsMarker(outcome)).toBe(true);
    expect(locator.calls).toEqual(['workspace_1', 'workspace_2']);
  });

  it('finds an owner holding the sandbox from another worktree', async () => {
    const { outcome } = await walk(
      [owner('workspace_1', { worktree: 'wt-2' })],
      [['workspace_1', { latencyMs: 57, answer: located('sbx-a', 'wt-2') }]],
    );
    expect(outcome).toMatchObject({ kind: 'Foreign', evidence: 'Reconciliation', owner: 'workspace_1' });
    expect(earnsMarker(outcome)).toBe(false);
  });

  it('reports a lookup past its 5 s cap as Incomplete(Timeout), never as a mismatch', async () => {
    const { outcome, elapsed, locator } = await walk(
      [owner('workspace_1')],
      [['workspace_1', { latencyMs: 0, hang: true }]],
    );
    expect(outcome).toMatchObject({
      kind: 'Incomplete',
      cause: 'Timeout',
      owner: 'workspace_1',
      stats: { timedOut: 1 },
    });
    expect(elapsed).toBe(44 + 5_000);
    expect(locator.aborted).toContain('workspace_1');
  });

  it('reports a located-elsewhere answer as Clear, never as a timeout', async () => {
    const { outcome } = await walk(
      [owner('workspace_1')],
      [['workspace_1', { latencyMs: 4_999, answer: located('sbx-b', undefined) }]],
    );
    expect(outcome).toMatchObject({ kind: 'Complete', stats: { timedOut: 0 } });
  });

  it('reports a failing lookup as Incomplete(LookupFailed) with its cause', async () => {
    const { outcome } = await walk(
      [owner('workspace_1')],
      [['workspace_1', { latencyMs: 10, error: new Error('503 from locator') }]],
    );
    expect(outcome).toMatchObject({
      kind: 'Incomplete',
      cause: 'LookupFailed',
      reason: expect.stringContaining('503 from locator'),
    });
  });

  it('reports missing history as Unavailable, which never earns the marker', async () => {
    const { outcome } = await walk(
      [owner('workspace_1')],
      [['workspace_1', { latencyMs: 10, answer: { kind: 'HistoryUnavailable', reason: 'purged' } }]],
    );
    expect(outcome).toMatchObject({ kind: 'Unavailable', owner: 'workspace_1' });
    expect(earnsMarker(outcome)).toBe(false);
  });

  it('cuts off the lookups still running when the 20 s budget ends', async () => {
    // 40 owners at 4.9 s each, 8 at a time: five waves would take 24.5 s, past the 20 s budget.
    const owners = Array.from({ length: 40 }, (_, i) => owner(`workspace_${i}`));
    const { outcome, elapsed } = await walk(
      owners,
      owners.map((o) => [o.session, { latencyMs: 4_900, answer: inAnotherSandbox }]),
    );
    // The fifth wave starts at 19.64 s with 0.36 s left, so its first owner is cut off by the budget.
    expect(outcome).toMatchObject({ kind: 'Incomplete', cause: 'Timeout', owner: 'workspace_32' });
    expect(elapsed).toBeLessThanOrEqual(20_000);
  });

  it('does not start a lookup once the budget is spent', async () => {
    const locator = new ScriptedLocator(
      new Map<string, Script>([
        ['workspace_0', { latencyMs: 956, answer: inAnotherSandbox }],
        ['workspace_1', { latencyMs: 1, answer: inAnotherSandbox }],
      ]),
    );
    const ledger = new ScriptedLedger({
      kind: 'Owners',
      owners: [owner('workspace_0'), owner('workspace_1')],
    });
    const limits = { budgetMs: 1_000, perCallMs: 1_000, concurrency: 1 };
    const pending = reconcileSandboxReferences({ target, ledger, locator, clock: systemClock, limits });
    await vi.runAllTimersAsync();
    expect(await pending).toMatchObject({
      kind: 'Incomplete',
      cause: 'BudgetExhausted',
      owner: 'workspace_1',
    });
    expect(locator.calls).toEqual(['workspace_0']);
  });

  it('runs at most 8 lookups at once', async () => {
    const owners = Array.from({ length: 30 }, (_, i) => owner(`workspace_${i}`));
    const { locator } = await walk(
      owners,
      owners.map((o) => [o.session, { latencyMs: 57, answer: inAnotherSandbox }]),
    );
    expect(locator.maxInFlight).toBe(8);
    expect(locator.calls).toHaveLength(30);
  });

  it('does not look up legacy owners, and lets them block only through a recorded allocation', async () => {
    const owners = [
      owner('agent_1'),
      owner('agent_2', { allocation: { sandbox: 'sbx-b', provider: 'kubernetes' } }),
      owner('workspace_3'),
      owner('agent_4', { allocation: { sandbox: 'sbx-a', provider: 'kubernetes' } }),
    ];
    const { outcome, locator } = await walk(owners, [
      ['workspace_3', { latencyMs: 57, answer: inAnotherSandbox }],
    ]);
    expect(locator.calls).toEqual(['workspace_3']);
    expect(outcome).toMatchObject({
      kind: 'Foreign',
      evidence: 'Ledger',
      owner: 'agent_4',
      stats: { skippedLegacy: 3, lookedUp: 1 },
    });
  });

  it('ignores a legacy allocation of the same sandbox under another provider', async () => {
    const { outcome } = await walk(
      [owner('agent_1', { allocation: { sandbox: 'sbx-a', provider: 'other' } })],
      [],
    );
    expect(outcome.kind).toBe('Complete');
  });

  it('looks up a worktree owner even when its session id is legacy', async () => {
    const { locator } = await walk(
      [owner('agent_1', { worktree: 'wt-3' })],
      [['agent_1', { latencyMs: 5, answer: inAnotherSandbox }]],
    );
    expect(locator.calls).toEqual(['agent_1']);
  });

  it('combines verdicts in owner order whatever order lookups finish in', async () => {
    const owners = Array.from({ length: 12 }, (_, i) => owner(`workspace_${i}`));
    const answers: Script[] = owners.map((_, i) =>
      i === 3
        ? { latencyMs: 0, hang: true }
        : i === 7
          ? { latencyMs: 0, answer: located('sbx-a', 'wt-2') }
          : i === 9
            ? { latencyMs: 0, answer: { kind: 'HistoryUnavailable', reason: 'purged' } }
            : { latencyMs: 0, answer: inAnotherSandbox },
    );
    const outcomes: ReconciliationOutcome[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 3_000 }), { minLength: 12, maxLength: 12 }),
        async (latencies) => {
          const scripts = owners.map((o, i): [string, Script] => [
            o.session,
            { ...answers[i]!, latencyMs: latencies[i]! },
          ]);
          outcomes.push((await walk(owners, scripts)).outcome);
        },
      ),
      { numRuns: 25 },
    );
    // Owner 3 times out before 7 (foreign) and 9 (unavailable) are considered, in every completion order.
    for (const outcome of outcomes)
      expect(outcome).toMatchObject({ kind: 'Incomplete', cause: 'Timeout', owner: 'workspace_3' });
  });

  it('aborts the lookups after the deciding owner', async () => {
    const owners = [owner('workspace_0'), owner('workspace_1')];
    const { outcome, locator } = await walk(owners, [
      ['workspace_0', { latencyMs: 10, answer: located('sbx-a', undefined) }],
      ['workspace_1', { latencyMs: 0, hang: true }],
    ]);
    expect(outcome).toMatchObject({ kind: 'Foreign', owner: 'workspace_0' });
    expect(locator.aborted).toContain('workspace_1');
  });
});

describe('the ledger call', () => {
  const run = async (ledger: ScriptedLedger) => {
    const pending = reconcileSandboxReferences({
      target,
      ledger,
      locator: new ScriptedLocator(new Map()),
      clock: systemClock,
    });
    await vi.runAllTimersAsync();
    return pending;
  };

  it('treats a ledger "shared" verdict as Foreign from the Ledger, never as complete', async () => {
    const outcome = await run(new ScriptedLedger({ kind: 'Shared', reason: 'two worktrees' }));
    expect(outcome).toMatchObject({ kind: 'Foreign', evidence: 'Ledger' });
    expect(earnsMarker(outcome)).toBe(false);
  });

  it('reports a failing ledger as Incomplete(LedgerFailed)', async () => {
    const outcome = await run(new ScriptedLedger(new Error('connection refused')));
    expect(outcome).toMatchObject({
      kind: 'Incomplete',
      cause: 'LedgerFailed',
      reason: expect.stringContaining('connection refused'),
    });
  });

  it('reports a slow ledger as Incomplete(Timeout) after its cap', async () => {
    const outcome = await run(new ScriptedLedger({ kind: 'Owners', owners: [] }, 60_000));
    expect(outcome).toMatchObject({ kind: 'Incomplete', cause: 'Timeout' });
  });

  it('reports lost ledger history as Unavailable', async () => {
    const outcome = await run(new ScriptedLedger({ kind: 'HistoryUnavailable', reason: 'retention' }));
    expect(outcome.kind).toBe('Unavailable');
  });

  it('completes for a sandbox no owner may reference', async () => {
    expect((await run(new ScriptedLedger({ kind: 'Owners', owners: [] }))).kind).toBe('Complete');
  });
});
