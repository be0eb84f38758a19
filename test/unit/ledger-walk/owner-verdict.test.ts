import { describe, expect, it } from 'vitest';
import {
  controlPlaneOwner,
  legacyOwnerVerdict,
  ownerVerdict,
  recordedAllocationVerdict,
  sessionFinding,
  sessionsToLocate,
  type ReconciliationTarget,
} from '../../../operator/ledger-walk/index.ts';
import { located, owner } from './scripted.ts';

const target: ReconciliationTarget = {
  namespace: 'team-a',
  sandbox: 'sbx-a',
  provider: 'kubernetes',
  worktree: 'wt-1',
};
const unrooted: ReconciliationTarget = { ...target, worktree: undefined };

describe('the plane rule', () => {
  it('looks up an owner with a worktree, whatever its session ids', () => {
    expect(controlPlaneOwner(owner('agent_1', { worktree: 'wt-3' }))).toBe(true);
  });

  it('looks up an owner when any one of its sessions is a workspace session', () => {
    // A legacy root that delegated to a control-plane session, and the other way round.
    expect(controlPlaneOwner(owner('agent_1', { sessions: ['agent_1', 'workspace_2', 'agent_3'] }))).toBe(
      true,
    );
    expect(controlPlaneOwner(owner('workspace_1', { sessions: ['workspace_1', 'agent_2'] }))).toBe(true);
  });

  it('skips an owner whose sessions are all legacy and which has no worktree', () => {
    expect(controlPlaneOwner(owner('agent_1', { sessions: ['agent_1', 'agent_2'] }))).toBe(false);
  });

  it('judges by the owner’s sessions, the root among them', () => {
    expect(controlPlaneOwner(owner('workspace_1', { sessions: [] }))).toBe(true);
    expect(controlPlaneOwner(owner('agent_1', { sessions: [] }))).toBe(false);
  });
});

describe('sessionFinding', () => {
  it('trusts the locator’s worktree over the ledger’s when they differ', () => {
    // The ledger recorded the owner in the target's worktree; the runtime holds it from wt-2.
    const finding = sessionFinding(
      owner('workspace_1', { worktree: 'wt-1' }),
      'workspace_1',
      located('sbx-a', 'wt-2'),
      target,
    );
    expect(finding).toEqual({
      kind: 'Foreign',
      owner: 'workspace_1',
      evidence: 'Reconciliation',
      reason: 'owner workspace_1 holds the sandbox from worktree wt-2',
    });
  });

  it('clears a session the locator places in the target’s worktree, whatever the ledger recorded', () => {
    const finding = sessionFinding(
      owner('workspace_1', { worktree: 'wt-2' }),
      'workspace_1',
      located('sbx-a', 'wt-1'),
      target,
    );
    expect(finding).toEqual({ kind: 'Clear', located: true });
  });

  it('falls back to the ledger’s worktree when the locator names none', () => {
    expect(
      sessionFinding(
        owner('workspace_1', { worktree: 'wt-1' }),
        'workspace_1',
        located('sbx-a', undefined),
        target,
      ),
    ).toEqual({ kind: 'Clear', located: true });
    expect(
      sessionFinding(
        owner('workspace_1', { worktree: 'wt-2' }),
        'workspace_1',
        located('sbx-a', undefined),
        target,
      ),
    ).toEqual({
      kind: 'Foreign',
      owner: 'workspace_1',
      evidence: 'Reconciliation',
      reason: 'owner workspace_1 holds the sandbox from worktree wt-2',
    });
  });

  it('finds a session with no worktree anywhere foreign, and says so', () => {
    expect(sessionFinding(owner('workspace_1'), 'workspace_1', located('sbx-a', undefined), target)).toEqual({
      kind: 'Foreign',
      owner: 'workspace_1',
      evidence: 'Reconciliation',
      reason: 'owner workspace_1 holds the sandbox from no worktree',
    });
  });

  it('finds every located session foreign to a sandbox with no worktree', () => {
    expect(
      sessionFinding(
        owner('workspace_1', { worktree: 'wt-1' }),
        'workspace_1',
        located('sbx-a', 'wt-1'),
        unrooted,
      ),
    ).toEqual({
      kind: 'Foreign',
      owner: 'workspace_1',
      evidence: 'Reconciliation',
      reason: 'owner workspace_1 holds the sandbox from worktree wt-1',
    });
  });

  it('names the delegate session through which its owner holds the sandbox', () => {
    const delegating = owner('agent_1', { sessions: ['agent_1', 'workspace_2'] });
    expect(sessionFinding(delegating, 'workspace_2', located('sbx-a', 'wt-2'), target)).toEqual({
      kind: 'Foreign',
      owner: 'agent_1',
      evidence: 'Reconciliation',
      reason: 'owner agent_1 holds the sandbox through session workspace_2 from worktree wt-2',
    });
    expect(
      sessionFinding(delegating, 'workspace_2', { kind: 'HistoryUnavailable', reason: 'purged' }, target),
    ).toEqual({
      kind: 'Unavailable',
      owner: 'agent_1',
      reason: 'history of workspace_2 (owner agent_1) is unavailable: purged',
    });
  });

  it('clears a session located in another sandbox or under another provider (an identity mismatch)', () => {
    const elsewhere = owner('workspace_1', { worktree: 'wt-2' });
    expect(sessionFinding(elsewhere, 'workspace_1', located('sbx-b', 'wt-2'), target)).toEqual({
      kind: 'Clear',
      located: true,
    });
    expect(
      sessionFinding(
        elsewhere,
        'workspace_1',
        { kind: 'Located', sandbox: 'sbx-a', provider: 'other', worktree: 'wt-2' },
        target,
      ),
    ).toEqual({ kind: 'Clear', located: true });
  });

  it('clears a session that holds no runtime, as not located', () => {
    expect(sessionFinding(owner('workspace_1'), 'workspace_1', { kind: 'NotAllocated' }, target)).toEqual({
      kind: 'Clear',
      located: false,
    });
  });

  it('reports lost history as Unavailable with the locator’s reason', () => {
    expect(
      sessionFinding(
        owner('workspace_1'),
        'workspace_1',
        { kind: 'HistoryUnavailable', reason: 'purged' },
        target,
      ),
    ).toEqual({
      kind: 'Unavailable',
      owner: 'workspace_1',
      reason: 'history of workspace_1 is unavailable: purged',
    });
  });
});

describe('sessionsToLocate', () => {
  it('puts the root first, then the other sessions in the ledger’s order', () => {
    expect(
      sessionsToLocate(owner('agent_1', { sessions: ['workspace_3', 'agent_1', 'workspace_2'] })),
    ).toEqual(['agent_1', 'workspace_3', 'workspace_2']);
  });

  it('locates the root even when the ledger lists only its delegates, and each session once', () => {
    expect(sessionsToLocate(owner('agent_1', { sessions: [] }))).toEqual(['agent_1']);
    expect(sessionsToLocate(owner('agent_1', { sessions: ['workspace_2', 'workspace_2'] }))).toEqual([
      'agent_1',
      'workspace_2',
    ]);
  });
});

describe('ownerVerdict', () => {
  const clear = { kind: 'Clear', located: true } as const;
  const notLocated = { kind: 'Clear', located: false } as const;
  const foreign = {
    kind: 'Foreign',
    owner: 'workspace_1',
    evidence: 'Reconciliation',
    reason: 'owner workspace_1 holds the sandbox through session workspace_3 from no worktree',
  } as const;
  const timedOut = {
    kind: 'Incomplete',
    owner: 'workspace_1',
    cause: 'Timeout',
    reason: 'lookup of workspace_2 (owner workspace_1) timed out after 5000 ms',
  } as const;
  const workspace = owner('workspace_1', { sessions: ['workspace_1', 'workspace_2', 'workspace_3'] });

  it('waits while a session before the deciding one is unknown', () => {
    expect(ownerVerdict(workspace, [undefined, clear, foreign])).toBeUndefined();
    expect(ownerVerdict(workspace, [clear, undefined, clear])).toBeUndefined();
  });

  it('is decided by the first session, in order, that is not clear, whatever comes after it', () => {
    expect(ownerVerdict(workspace, [clear, timedOut, foreign])).toEqual(timedOut);
    expect(ownerVerdict(workspace, [notLocated, foreign, undefined])).toEqual(foreign);
  });

  it('is clear when every session is clear and one of them was located', () => {
    expect(ownerVerdict(workspace, [notLocated, clear, notLocated])).toEqual({
      kind: 'Clear',
      owner: 'workspace_1',
    });
  });

  it('is clear when no session is allocated but the ledger recorded an allocation', () => {
    const recorded = owner('workspace_1', { allocation: { sandbox: 'sbx-b', provider: 'kubernetes' } });
    expect(ownerVerdict(recorded, [notLocated])).toEqual({ kind: 'Clear', owner: 'workspace_1' });
  });

  it('is unavailable when no session is allocated and the ledger recorded no allocation', () => {
    expect(ownerVerdict(workspace, [notLocated, notLocated, notLocated])).toEqual({
      kind: 'Unavailable',
      owner: 'workspace_1',
      reason: 'no session of owner workspace_1 is allocated and the ledger recorded no allocation for it',
    });
  });
});

describe('recordedAllocationVerdict', () => {
  const allocation = { sandbox: 'sbx-a', provider: 'kubernetes' };

  it('finds a recorded allocation of the target from another worktree foreign, on the ledger’s evidence', () => {
    expect(
      recordedAllocationVerdict(owner('workspace_1', { allocation, worktree: 'wt-2' }), target, 'owner'),
    ).toEqual({
      kind: 'Foreign',
      owner: 'workspace_1',
      evidence: 'Ledger',
      reason: 'owner workspace_1 has a recorded allocation of kubernetes/sbx-a',
    });
  });

  it('says nothing of an allocation from the target’s worktree, of another sandbox, or of none', () => {
    for (const recorded of [
      owner('workspace_1', { allocation, worktree: 'wt-1' }),
      owner('workspace_1', { allocation: { sandbox: 'sbx-b', provider: 'kubernetes' } }),
      owner('workspace_1', { allocation: { sandbox: 'sbx-a', provider: 'other' } }),
      owner('workspace_1'),
    ])
      expect(recordedAllocationVerdict(recorded, target, 'owner')).toBeUndefined();
  });
});

describe('legacyOwnerVerdict', () => {
  const allocation = { sandbox: 'sbx-a', provider: 'kubernetes' };

  it('blocks on a recorded allocation of the target from no worktree', () => {
    expect(legacyOwnerVerdict(owner('agent_1', { allocation }), target)).toEqual({
      kind: 'Foreign',
      owner: 'agent_1',
      evidence: 'Ledger',
      reason: 'legacy owner agent_1 has a recorded allocation of kubernetes/sbx-a',
    });
  });

  it('blocks on a recorded allocation of the target from another worktree', () => {
    expect(legacyOwnerVerdict(owner('agent_1', { allocation, worktree: 'wt-2' }), target)).toMatchObject({
      kind: 'Foreign',
      owner: 'agent_1',
    });
  });

  it('clears a recorded allocation of the target from the target’s own worktree', () => {
    // Reachable with a plane rule that does not look up worktree owners.
    expect(legacyOwnerVerdict(owner('agent_1', { allocation, worktree: 'wt-1' }), target)).toEqual({
      kind: 'Clear',
      owner: 'agent_1',
    });
  });

  it('clears an owner with no allocation, or one naming another sandbox or provider', () => {
    for (const other of [
      undefined,
      { sandbox: 'sbx-b', provider: 'kubernetes' },
      { sandbox: 'sbx-a', provider: 'x' },
    ])
      expect(legacyOwnerVerdict(owner('agent_1', { allocation: other }), target)).toEqual({
        kind: 'Clear',
        owner: 'agent_1',
      });
  });
});
