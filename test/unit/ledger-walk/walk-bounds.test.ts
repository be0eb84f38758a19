/**
 * The walk's bounds and aborts observed on the fake clock (Date.now is faked): when each call was cut
 * off, what the stats count, and the reasons the controller publishes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  reconcileSandboxReferences,
  systemClock,
  type LedgerOwner,
  type LedgerReport,
  type ReconcileLimits,
} from '../../../operator/ledger-walk/index.ts';
import { lookupSession } from '../../../operator/ledger-walk/lookup.ts';
import {
  inAnotherSandbox,
  located,
  owner,
  ScriptedLedger,
  ScriptedLocator,
  type Script,
} from './scripted.ts';

const target = { namespace: 'team-a', sandbox: 'sbx-a', provider: 'kubernetes', worktree: 'wt-1' };

async function walk(
  owners: LedgerOwner[] | LedgerReport | Error,
  scripts: [string, Script][] = [],
  options: { limits?: ReconcileLimits; ledgerLatencyMs?: number } = {},
) {
  const locator = new ScriptedLocator(new Map(scripts));
  const report = Array.isArray(owners) ? { kind: 'Owners' as const, owners } : owners;
  const ledger = new ScriptedLedger(report, options.ledgerLatencyMs ?? 44);
  const pending = reconcileSandboxReferences({
    target,
    ledger,
    locator,
    clock: systemClock,
    ...(options.limits ? { limits: options.limits } : {}),
  });
  await vi.runAllTimersAsync();
  return { outcome: await pending, locator, ledger };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the ledger call', () => {
  it('is cut off at its 5 s cap, aborted then, and counted as a timeout', async () => {
    const { outcome, ledger } = await walk({ kind: 'Owners', owners: [] }, [], { ledgerLatencyMs: 60_000 });
    expect(outcome).toEqual({
      kind: 'Incomplete',
      cause: 'Timeout',
      owner: undefined,
      reason: 'ledger call timed out after 5000 ms',
      stats: { owners: 0, lookedUp: 0, skippedLegacy: 0, timedOut: 1, failed: 0, elapsedMs: 5_000 },
    });
    expect(ledger.abortedAt).toBe(5_000);
  });

  it('is capped by a budget shorter than the per-call cap', async () => {
    const limits = { budgetMs: 1_000, perCallMs: 5_000, concurrency: 8 };
    const { outcome, ledger } = await walk({ kind: 'Owners', owners: [] }, [], {
      ledgerLatencyMs: 60_000,
      limits,
    });
    expect(outcome).toMatchObject({
      reason: 'ledger call timed out after 1000 ms',
      stats: { timedOut: 1, elapsedMs: 1_000 },
    });
    expect(ledger.abortedAt).toBe(1_000);
  });

  it('counts a failing ledger as failed, not timed out', async () => {
    const { outcome } = await walk(new Error('connection refused'));
    expect(outcome).toEqual({
      kind: 'Incomplete',
      cause: 'LedgerFailed',
      owner: undefined,
      reason: 'ledger call failed: connection refused',
      stats: { owners: 0, lookedUp: 0, skippedLegacy: 0, timedOut: 0, failed: 1, elapsedMs: 44 },
    });
  });

  it('passes the ledger’s own reasons on', async () => {
    expect((await walk({ kind: 'Shared', reason: 'two worktrees' })).outcome).toMatchObject({
      kind: 'Foreign',
      owner: undefined,
      reason: 'ledger verdict shared: two worktrees',
    });
    expect((await walk({ kind: 'HistoryUnavailable', reason: 'retention' })).outcome).toMatchObject({
      kind: 'Unavailable',
      owner: undefined,
      reason: 'ledger history unavailable: retention',
    });
  });
});

describe('the lookups', () => {
  it('count exactly what happened in a complete walk', async () => {
    vi.setSystemTime(1_000_000); // elapsed time is measured from the start, not from the epoch
    const { outcome } = await walk(
      [owner('workspace_1', { worktree: 'wt-1' }), owner('agent_2'), owner('workspace_3')],
      [
        ['workspace_1', { latencyMs: 57, answer: located('sbx-a', 'wt-1') }],
        ['workspace_3', { latencyMs: 30, answer: inAnotherSandbox }],
      ],
    );
    expect(outcome).toEqual({
      kind: 'Complete',
      stats: { owners: 3, lookedUp: 2, skippedLegacy: 1, timedOut: 0, failed: 0, elapsedMs: 44 + 57 },
    });
  });

  it('count a failed lookup as failed, not timed out', async () => {
    const { outcome } = await walk(
      [owner('workspace_1')],
      [['workspace_1', { latencyMs: 10, error: new Error('503 from locator') }]],
    );
    expect(outcome).toEqual({
      kind: 'Incomplete',
      cause: 'LookupFailed',
      owner: 'workspace_1',
      reason: 'lookup of workspace_1 failed: 503 from locator',
      stats: { owners: 1, lookedUp: 1, skippedLegacy: 0, timedOut: 0, failed: 1, elapsedMs: 54 },
    });
  });

  it('cut a lookup off at its 5 s cap and abort it then', async () => {
    const { outcome, locator } = await walk(
      [owner('workspace_1')],
      [['workspace_1', { latencyMs: 0, hang: true }]],
    );
    expect(outcome).toMatchObject({
      reason: 'lookup of workspace_1 timed out after 5000 ms',
      stats: { timedOut: 1, failed: 0, elapsedMs: 5_044 },
    });
    expect(locator.abortedAt.get('workspace_1')).toBe(5_044);
  });

  it('are aborted the moment an earlier owner decides, not at their cap', async () => {
    const { outcome, locator } = await walk(
      [owner('workspace_0'), owner('workspace_1'), owner('workspace_2')],
      [
        ['workspace_0', { latencyMs: 10, answer: located('sbx-a', 'wt-2') }],
        ['workspace_1', { latencyMs: 0, hang: true }],
        ['workspace_2', { latencyMs: 0, hang: true }],
      ],
    );
    expect(outcome).toMatchObject({ kind: 'Foreign', owner: 'workspace_0', stats: { elapsedMs: 54 } });
    expect(Object.fromEntries(locator.abortedAt)).toEqual({
      workspace_0: 54,
      workspace_1: 54,
      workspace_2: 54,
    });
  });

  it('still queued when an owner decides are never started', async () => {
    const limits = { budgetMs: 20_000, perCallMs: 5_000, concurrency: 1 };
    const { outcome, locator } = await walk(
      [owner('workspace_0'), owner('workspace_1')],
      [
        ['workspace_0', { latencyMs: 10, answer: { kind: 'HistoryUnavailable', reason: 'purged' } }],
        ['workspace_1', { latencyMs: 10, answer: { kind: 'NotAllocated' } }],
      ],
      { limits },
    );
    expect(outcome).toMatchObject({ kind: 'Unavailable', owner: 'workspace_0' });
    expect(locator.calls).toEqual(['workspace_0']);
  });

  it('say which owner the spent budget left out', async () => {
    const limits = { budgetMs: 1_000, perCallMs: 1_000, concurrency: 1 };
    const { outcome } = await walk(
      [owner('workspace_0'), owner('workspace_1')],
      [['workspace_0', { latencyMs: 956, answer: inAnotherSandbox }]],
      { limits },
    );
    expect(outcome).toMatchObject({
      cause: 'BudgetExhausted',
      reason: 'budget of 1000 ms spent before workspace_1 was looked up',
    });
  });

  it('look up every session of a legacy root that delegated to a control-plane session', async () => {
    const delegating = owner('agent_1', { sessions: ['agent_1', 'workspace_2'] });
    const { outcome, locator } = await walk(
      [delegating],
      [
        ['agent_1', { latencyMs: 5, answer: located('sbx-a', 'wt-2') }],
        ['workspace_2', { latencyMs: 5, answer: { kind: 'NotAllocated' } }],
      ],
    );
    expect(locator.calls).toEqual(['agent_1', 'workspace_2']);
    expect(outcome).toMatchObject({
      kind: 'Foreign',
      owner: 'agent_1',
      stats: { lookedUp: 2, skippedLegacy: 0 },
    });
  });
});

describe('the sessions of an owner', () => {
  const sessionsOf = (root: string, count: number) =>
    owner(root, { sessions: Array.from({ length: count }, (_, i) => `${root}_${i}`) });

  it('share the one pool of lookups with every other owner', async () => {
    const many = sessionsOf('workspace_1', 20);
    const { outcome, locator } = await walk(
      [many],
      [many.session, ...many.sessions].map((session): [string, Script] => [
        session,
        { latencyMs: 57, answer: inAnotherSandbox },
      ]),
    );
    expect(locator.maxInFlight).toBe(8);
    expect(locator.calls).toHaveLength(21);
    // Three waves of 8, 8 and 5 lookups after the ledger's 44 ms.
    expect(outcome).toMatchObject({ kind: 'Complete', stats: { lookedUp: 21, elapsedMs: 44 + 3 * 57 } });
  });

  it('are read in session order: an earlier session’s timeout decides before a later one found foreign', async () => {
    const { outcome } = await walk(
      [owner('workspace_1', { sessions: ['workspace_1', 'workspace_2'] })],
      [
        ['workspace_1', { latencyMs: 0, hang: true }],
        ['workspace_2', { latencyMs: 10, answer: located('sbx-a', 'wt-2') }],
      ],
    );
    expect(outcome).toEqual({
      kind: 'Incomplete',
      cause: 'Timeout',
      owner: 'workspace_1',
      reason: 'lookup of workspace_1 timed out after 5000 ms',
      stats: { owners: 1, lookedUp: 2, skippedLegacy: 0, timedOut: 1, failed: 0, elapsedMs: 5_044 },
    });
  });

  it('name the delegate whose lookup timed out, with its owner', async () => {
    const { outcome } = await walk(
      [owner('workspace_1', { sessions: ['workspace_1', 'workspace_2'] })],
      [
        ['workspace_1', { latencyMs: 10, answer: inAnotherSandbox }],
        ['workspace_2', { latencyMs: 0, hang: true }],
      ],
    );
    expect(outcome).toMatchObject({
      kind: 'Incomplete',
      owner: 'workspace_1',
      reason: 'lookup of workspace_2 (owner workspace_1) timed out after 5000 ms',
      stats: { timedOut: 1, elapsedMs: 5_044 },
    });
  });

  it('not yet started when their owner is decided never start; one under way still counts', async () => {
    const limits = { budgetMs: 20_000, perCallMs: 5_000, concurrency: 3 };
    const { outcome, locator } = await walk(
      [
        owner('workspace_0'),
        owner('workspace_1', { sessions: ['workspace_1', 'workspace_2', 'workspace_3', 'workspace_4'] }),
      ],
      [
        ['workspace_0', { latencyMs: 200, answer: inAnotherSandbox }],
        ['workspace_1', { latencyMs: 10, answer: located('sbx-a', 'wt-2') }],
        ['workspace_2', { latencyMs: 100, error: new Error('503 from locator') }],
        ['workspace_3', { latencyMs: 10, answer: inAnotherSandbox }],
        ['workspace_4', { latencyMs: 10, answer: inAnotherSandbox }],
      ],
      { limits },
    );
    // workspace_1 decides its owner at 54 ms; workspace_2 was under way, workspace_3 and _4 were queued.
    expect(locator.calls).toEqual(['workspace_0', 'workspace_1', 'workspace_2']);
    expect(outcome).toEqual({
      kind: 'Foreign',
      evidence: 'Reconciliation',
      owner: 'workspace_1',
      reason: 'owner workspace_1 holds the sandbox from worktree wt-2',
      stats: { owners: 2, lookedUp: 3, skippedLegacy: 0, timedOut: 0, failed: 1, elapsedMs: 244 },
    });
  });

  it('say which session the spent budget left out', async () => {
    const limits = { budgetMs: 1_000, perCallMs: 1_000, concurrency: 1 };
    const { outcome, locator } = await walk(
      [owner('workspace_1', { sessions: ['workspace_1', 'workspace_2'] })],
      [['workspace_1', { latencyMs: 956, answer: inAnotherSandbox }]],
      { limits },
    );
    expect(locator.calls).toEqual(['workspace_1']);
    expect(outcome).toEqual({
      kind: 'Incomplete',
      cause: 'BudgetExhausted',
      owner: 'workspace_1',
      reason: 'budget of 1000 ms spent before workspace_2 (owner workspace_1) was looked up',
      stats: { owners: 1, lookedUp: 1, skippedLegacy: 0, timedOut: 0, failed: 1, elapsedMs: 1_000 },
    });
  });

  it('are not looked up when the owner’s recorded allocation already makes it foreign', async () => {
    const { outcome, locator } = await walk(
      [
        owner('workspace_1', {
          sessions: ['workspace_1', 'workspace_2'],
          allocation: { sandbox: 'sbx-a', provider: 'kubernetes' },
        }),
      ],
      [],
    );
    expect(locator.calls).toEqual([]);
    expect(outcome).toEqual({
      kind: 'Foreign',
      evidence: 'Ledger',
      owner: 'workspace_1',
      reason: 'owner workspace_1 has a recorded allocation of kubernetes/sbx-a',
      stats: { owners: 1, lookedUp: 0, skippedLegacy: 0, timedOut: 0, failed: 0, elapsedMs: 44 },
    });
  });
});

describe('lookupSession', () => {
  it('gives no verdict for a lookup the walk cancelled', async () => {
    const cancel = new AbortController();
    const locator = new ScriptedLocator(new Map([['workspace_1', { latencyMs: 0, hang: true }]]));
    const verdict = lookupSession(
      locator,
      owner('workspace_1'),
      'workspace_1',
      target,
      systemClock,
      5_000,
      cancel.signal,
    );
    await vi.advanceTimersByTimeAsync(10);
    cancel.abort();
    expect(await verdict).toBeUndefined();
    expect(locator.abortedAt.get('workspace_1')).toBe(10);
  });
});
