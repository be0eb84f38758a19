import { describe, expect, it } from 'vitest';
import {
  controlPlaneOwner,
  legacyOwnerVerdict,
  lookupVerdict,
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

describe('lookupVerdict', () => {
  it('trusts the locator’s worktree over the ledger’s when they differ', () => {
    // The ledger recorded the owner in the target's worktree; the runtime holds it from wt-2.
    const verdict = lookupVerdict(
      owner('workspace_1', { worktree: 'wt-1' }),
      located('sbx-a', 'wt-2'),
      target,
    );
    expect(verdict).toEqual({
      kind: 'Foreign',
      owner: 'workspace_1',
      evidence: 'Reconciliation',
      reason: 'owner workspace_1 holds the sandbox from worktree wt-2',
    });
  });

  it('clears an owner the locator places in the target’s worktree, whatever the ledger recorded', () => {
    const verdict = lookupVerdict(
      owner('workspace_1', { worktree: 'wt-2' }),
      located('sbx-a', 'wt-1'),
      target,
    );
    expect(verdict).toEqual({ kind: 'Clear', owner: 'workspace_1' });
  });

  it('falls back to the ledger’s worktree when the locator names none', () => {
    expect(
      lookupVerdict(owner('workspace_1', { worktree: 'wt-1' }), located('sbx-a', undefined), target),
    ).toEqual({
      kind: 'Clear',
      owner: 'workspace_1',
    });
    expect(
      lookupVerdict(owner('workspace_1', { worktree: 'wt-2' }), located('sbx-a', undefined), target),
    ).toEqual({
      kind: 'Foreign',
      owner: 'workspace_1',
      evidence: 'Reconciliation',
      reason: 'owner workspace_1 holds the sandbox from worktree wt-2',
    });
  });

  it('finds an owner with no worktree anywhere foreign, and says so', () => {
    expect(lookupVerdict(owner('workspace_1'), located('sbx-a', undefined), target)).toEqual({
      kind: 'Foreign',
      owner: 'workspace_1',
      evidence: 'Reconciliation',
      reason: 'owner workspace_1 holds the sandbox from no worktree',
    });
  });

  it('finds every located owner foreign to a sandbox with no worktree', () => {
    expect(
      lookupVerdict(owner('workspace_1', { worktree: 'wt-1' }), located('sbx-a', 'wt-1'), unrooted),
    ).toEqual({
      kind: 'Foreign',
      owner: 'workspace_1',
      evidence: 'Reconciliation',
      reason: 'owner workspace_1 holds the sandbox from worktree wt-1',
    });
  });

  it('clears an owner located in another sandbox or under another provider (an identity mismatch)', () => {
    const elsewhere = owner('workspace_1', { worktree: 'wt-2' });
    expect(lookupVerdict(elsewhere, located('sbx-b', 'wt-2'), target)).toEqual({
      kind: 'Clear',
      owner: 'workspace_1',
    });
    expect(
      lookupVerdict(
        elsewhere,
        { kind: 'Located', sandbox: 'sbx-a', provider: 'other', worktree: 'wt-2' },
        target,
      ),
    ).toEqual({ kind: 'Clear', owner: 'workspace_1' });
  });

  it('clears an owner that holds no runtime', () => {
    expect(lookupVerdict(owner('workspace_1'), { kind: 'NotAllocated' }, target)).toEqual({
      kind: 'Clear',
      owner: 'workspace_1',
    });
  });

  it('reports lost history as Unavailable with the locator’s reason', () => {
    expect(
      lookupVerdict(owner('workspace_1'), { kind: 'HistoryUnavailable', reason: 'purged' }, target),
    ).toEqual({
      kind: 'Unavailable',
      owner: 'workspace_1',
      reason: 'history of workspace_1 is unavailable: purged',
    });
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
