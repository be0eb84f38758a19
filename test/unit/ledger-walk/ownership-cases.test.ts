/**
 * The ownership cases of seed 000's walk (its `reconcileSandboxReferences` tests), in our contract's words,
 * and the cases of issue 25 item 3: every session of a looked-up owner is located, and a recorded allocation
 * of the target counts as foreign whatever the locator says now (docs/legacy-reconciliation.md, "Who is
 * looked up" and "An owner's verdict").
 *
 * Translation: the seed's `complete` is our `Complete`, `foreign` our `Foreign`, `unavailable` our
 * `Unavailable`, and its thrown locator errors our `Incomplete(LookupFailed)`; its `null` runtime location
 * is our `not-allocated`. Its locator identity checks (user, organization) have no counterpart: our locator
 * answers only for the session it is asked about.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  reconcileSandboxReferences,
  systemClock,
  type LedgerOwner,
  type RuntimeLocation,
} from '../../../operator/ledger-walk/index.ts';
import { located, owner, ScriptedLedger, ScriptedLocator, type Script } from './scripted.ts';

const target = { namespace: 'team-a', sandbox: 'sbx-a', provider: 'kubernetes', worktree: 'wt-1' };
const ofTarget = { sandbox: 'sbx-a', provider: 'kubernetes' };
const elsewhere = { sandbox: 'sbx-b', provider: 'kubernetes' };
const notAllocated: RuntimeLocation = { kind: 'NotAllocated' };

type Case = {
  readonly name: string;
  readonly owners: readonly LedgerOwner[];
  /** Locator answers (after 57 ms) or failures, per session; an unscripted lookup fails the test. */
  readonly answers: Readonly<Record<string, RuntimeLocation | Error>>;
  /** What the outcome must match (toMatchObject): its kind and whatever else the case pins. */
  readonly outcome: Readonly<Record<string, unknown>>;
  /** The sessions the locator was asked about, in the order asked. */
  readonly lookedUp: readonly string[];
};

const seedCases: readonly Case[] = [
  {
    name: 'a legacy root is clear without a lookup, even where its locator would name the target',
    owners: [owner('agent_1')],
    answers: { agent_1: located('sbx-a', undefined) },
    outcome: { kind: 'Complete' },
    lookedUp: [],
  },
  {
    name: 'legacy no-worktree owners with no recorded evidence are not walked',
    owners: ['agent_1', 'agent_2', 'agent_3', 'agent_4', 'agent_5'].map((id) => owner(id)),
    answers: {},
    outcome: { kind: 'Complete', stats: expect.objectContaining({ skippedLegacy: 5 }) },
    lookedUp: [],
  },
  {
    name: 'a legacy owner’s recorded allocation of the target blocks without a lookup',
    owners: [owner('agent_1', { allocation: ofTarget })],
    answers: {},
    outcome: { kind: 'Foreign', evidence: 'Ledger', owner: 'agent_1' },
    lookedUp: [],
  },
  {
    name: 'a legacy owner’s recorded allocation of another sandbox is clear',
    owners: [owner('agent_1', { allocation: elsewhere })],
    answers: {},
    outcome: { kind: 'Complete' },
    lookedUp: [],
  },
  {
    name: 'a control-plane no-worktree owner whose locator names the target is foreign',
    owners: [owner('workspace_1')],
    answers: { workspace_1: located('sbx-a', undefined) },
    outcome: { kind: 'Foreign', evidence: 'Reconciliation', owner: 'workspace_1' },
    lookedUp: ['workspace_1'],
  },
  {
    name: 'a worktree owner whose locator names the target is foreign',
    owners: [owner('workspace_1', { worktree: 'wt-2' })],
    answers: { workspace_1: located('sbx-a', 'wt-2') },
    outcome: { kind: 'Foreign', evidence: 'Reconciliation', owner: 'workspace_1' },
    lookedUp: ['workspace_1'],
  },
  {
    name: 'a control-plane no-worktree owner with no location and no recorded allocation is unavailable',
    owners: [owner('workspace_1')],
    answers: { workspace_1: notAllocated },
    outcome: { kind: 'Unavailable', owner: 'workspace_1' },
    lookedUp: ['workspace_1'],
  },
  {
    name: 'a worktree owner with no location and no recorded allocation is unavailable',
    owners: [owner('workspace_1', { worktree: 'wt-2' })],
    answers: { workspace_1: notAllocated },
    outcome: { kind: 'Unavailable', owner: 'workspace_1' },
    lookedUp: ['workspace_1'],
  },
  {
    name: 'a no-worktree owner whose sessions mix control and legacy ids is walked session by session',
    owners: [owner('workspace_1', { sessions: ['workspace_1', 'agent_2'] })],
    answers: { workspace_1: located('sbx-b', undefined), agent_2: notAllocated },
    outcome: { kind: 'Complete' },
    lookedUp: ['workspace_1', 'agent_2'],
  },
  {
    name: 'both survivor kinds are walked: a control no-worktree owner and a worktree owner with a legacy id',
    owners: [owner('workspace_1'), owner('agent_2', { worktree: 'wt-2' })],
    answers: { workspace_1: located('sbx-b', undefined), agent_2: located('sbx-b', 'wt-2') },
    outcome: { kind: 'Complete' },
    lookedUp: ['workspace_1', 'agent_2'],
  },
  {
    name: 'a locator naming the target wins over a recorded allocation of another sandbox (a route change)',
    owners: [owner('workspace_1', { allocation: elsewhere })],
    answers: { workspace_1: located('sbx-a', undefined) },
    outcome: { kind: 'Foreign', evidence: 'Reconciliation', owner: 'workspace_1' },
    lookedUp: ['workspace_1'],
  },
  {
    name: 'an earlier owner’s recorded allocation of the target decides before a later owner’s failed lookup',
    owners: [owner('agent_1', { allocation: ofTarget }), owner('workspace_2', { worktree: 'wt-2' })],
    answers: { workspace_2: new Error('503 from locator') },
    outcome: { kind: 'Foreign', evidence: 'Ledger', owner: 'agent_1' },
    // The first owner decides at once, so the later lookup is never started.
    lookedUp: [],
  },
  {
    name: 'an earlier owner’s failed lookup decides before a later owner’s recorded allocation of the target',
    owners: [owner('workspace_1', { worktree: 'wt-2' }), owner('agent_2', { allocation: ofTarget })],
    answers: { workspace_1: new Error('503 from locator') },
    outcome: { kind: 'Incomplete', cause: 'LookupFailed', owner: 'workspace_1' },
    lookedUp: ['workspace_1'],
  },
  {
    name: 'complete only when every owner is accounted for and none names the sandbox',
    owners: [owner('workspace_1'), owner('agent_2', { worktree: 'wt-2' })],
    answers: { workspace_1: located('sbx-b', 'wt-2'), agent_2: located('sbx-b', 'wt-2') },
    outcome: { kind: 'Complete' },
    lookedUp: ['workspace_1', 'agent_2'],
  },
];

const issueCases: readonly Case[] = [
  {
    name: 'a delegate session holding the target from another worktree makes its owner foreign',
    owners: [owner('workspace_1', { sessions: ['workspace_1', 'workspace_2'], worktree: 'wt-2' })],
    answers: { workspace_1: notAllocated, workspace_2: located('sbx-a', 'wt-2') },
    outcome: { kind: 'Foreign', evidence: 'Reconciliation', owner: 'workspace_1' },
    lookedUp: ['workspace_1', 'workspace_2'],
  },
  {
    name: 'a legacy root that delegated to a control-plane session is found foreign through the delegate',
    owners: [owner('agent_1', { sessions: ['agent_1', 'workspace_2'] })],
    answers: { agent_1: notAllocated, workspace_2: located('sbx-a', 'wt-2') },
    outcome: { kind: 'Foreign', evidence: 'Reconciliation', owner: 'agent_1' },
    lookedUp: ['agent_1', 'workspace_2'],
  },
  {
    name: 'a recorded allocation of the target is foreign though the locator says not allocated',
    owners: [owner('workspace_1', { worktree: 'wt-2', allocation: ofTarget })],
    answers: { workspace_1: notAllocated },
    outcome: { kind: 'Foreign', evidence: 'Ledger', owner: 'workspace_1' },
    lookedUp: [],
  },
  {
    name: 'a recorded allocation of the target is foreign though the locator places the owner elsewhere now',
    owners: [owner('workspace_1', { allocation: ofTarget })],
    answers: { workspace_1: located('sbx-b', undefined) },
    outcome: { kind: 'Foreign', evidence: 'Ledger', owner: 'workspace_1' },
    lookedUp: [],
  },
  {
    name: 'a recorded allocation of the target from the target’s own worktree is evidence, and clear',
    owners: [owner('workspace_1', { worktree: 'wt-1', allocation: ofTarget })],
    answers: { workspace_1: notAllocated },
    outcome: { kind: 'Complete' },
    lookedUp: ['workspace_1'],
  },
  {
    name: 'a recorded allocation of another sandbox is evidence enough when no session is allocated',
    owners: [owner('workspace_1', { worktree: 'wt-2', allocation: elsewhere })],
    answers: { workspace_1: notAllocated },
    outcome: { kind: 'Complete' },
    lookedUp: ['workspace_1'],
  },
  {
    name: 'an owner none of whose sessions is allocated, with no recorded allocation, is unavailable',
    owners: [owner('agent_1', { sessions: ['agent_1', 'workspace_2'] })],
    answers: { agent_1: notAllocated, workspace_2: notAllocated },
    outcome: {
      kind: 'Unavailable',
      owner: 'agent_1',
      reason: 'no session of owner agent_1 is allocated and the ledger recorded no allocation for it',
    },
    lookedUp: ['agent_1', 'workspace_2'],
  },
  {
    name: 'the root is located even when the ledger lists only its delegates',
    owners: [owner('workspace_1', { sessions: ['workspace_2'] })],
    answers: { workspace_1: located('sbx-a', undefined), workspace_2: located('sbx-b', undefined) },
    outcome: { kind: 'Foreign', evidence: 'Reconciliation', owner: 'workspace_1' },
    lookedUp: ['workspace_1', 'workspace_2'],
  },
  {
    name: 'a session the ledger lists twice is located once',
    owners: [owner('workspace_1', { sessions: ['workspace_1', 'workspace_2', 'workspace_2'] })],
    answers: { workspace_1: located('sbx-b', undefined), workspace_2: notAllocated },
    outcome: { kind: 'Complete', stats: expect.objectContaining({ lookedUp: 2 }) },
    lookedUp: ['workspace_1', 'workspace_2'],
  },
  {
    name: 'a delegate whose history is gone makes its owner unavailable, though the root is located',
    owners: [owner('workspace_1', { sessions: ['workspace_1', 'workspace_2'] })],
    answers: {
      workspace_1: located('sbx-b', undefined),
      workspace_2: { kind: 'HistoryUnavailable', reason: 'purged' },
    },
    outcome: { kind: 'Unavailable', owner: 'workspace_1' },
    lookedUp: ['workspace_1', 'workspace_2'],
  },
  {
    name: 'a delegate’s failed lookup leaves its owner incomplete',
    owners: [owner('workspace_1', { sessions: ['workspace_1', 'workspace_2'] })],
    answers: { workspace_1: located('sbx-b', undefined), workspace_2: new Error('503 from locator') },
    outcome: { kind: 'Incomplete', cause: 'LookupFailed', owner: 'workspace_1' },
    lookedUp: ['workspace_1', 'workspace_2'],
  },
];

const script = (answer: RuntimeLocation | Error): Script =>
  answer instanceof Error ? { latencyMs: 57, error: answer } : { latencyMs: 57, answer };

async function walk(owners: readonly LedgerOwner[], answers: Case['answers']) {
  const locator = new ScriptedLocator(
    new Map(Object.entries(answers).map(([session, answer]) => [session, script(answer)])),
  );
  const ledger = new ScriptedLedger({ kind: 'Owners', owners });
  const pending = reconcileSandboxReferences({ target, ledger, locator, clock: systemClock });
  await vi.runAllTimersAsync();
  return { outcome: await pending, locator };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe.each([
  ['seed 000’s ownership cases', seedCases],
  ['issue 25 item 3', issueCases],
])('%s', (_, cases) => {
  it.each(cases)('$name', async ({ owners, answers, outcome, lookedUp }) => {
    const result = await walk(owners, answers);
    expect(result.outcome).toMatchObject(outcome);
    expect(result.locator.calls).toEqual(lookedUp);
  });
});
