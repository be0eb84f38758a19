/**
 * The deletion's classification on its own: from what a turn knows to the one next step. `walk` plays a turn
 * by giving each step the facts its shell would learn, so a test reads as the order of the steps.
 */
import { describe, expect, it } from 'vitest';
import {
  nextDeletionStep,
  WRITE_STEPS,
  type DeletionFacts,
} from '../../../operator/controller/deletion/steps.ts';
import { pod } from '../builders.ts';
import type { LegacyEvidence, Verdict } from '../../../operator/exclusivity/exclusivity.ts';
import { claim, evidence, exclusive, foreign, index, start, walk, type World } from './deletion-walk.ts';

describe('the deletion steps', () => {
  it('wait for released pods without a read, unless an erase request is pending', () => {
    const going = { ...start, cachedPods: true, podsGoing: true };
    expect(walk(going, { cached: exclusive })).toEqual(['pods-going']);
    expect(walk({ ...going, eraseRequest: 'INC-1' }, { cached: exclusive })[0]).toBe('read-incarnation');
  });

  it('treat a recorded Exclusive as final: no evidence, erase, prune or decision again, whatever the cache now holds', () => {
    const final = { ...start, cachedPods: true, final: true, eraseRequest: 'INC-1', tombstones: ['old'] };
    expect(walk(final, { cached: foreign, pods: [pod('sbx', 0)] })).toEqual([
      'read-incarnation',
      'keep-guard',
      'keep-isolation',
      'list-pods',
      'delete-pod',
      'release-pod',
      'remove-guard',
      'await-pods-gone',
    ]);
    expect(walk({ ...start, final: true }, { cached: foreign, pods: [] })).toEqual([
      'read-incarnation',
      'list-pods',
      'remove-guard',
      'remove-isolation',
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('leave a final erase’s late references until the finalizer is gone, then erase them', () => {
    const late = [{ name: 'late-host', uid: 'u-late', resourceVersion: '41' }];
    expect(walk({ ...start, final: true }, { cached: foreign, pods: [], late })).toEqual([
      'read-incarnation',
      'list-pods',
      'remove-guard',
      'remove-isolation',
      'erase-index',
      'remove-finalizer',
      'erase-late',
      'finished',
    ]);
    expect(nextDeletionStep({ ...start, finalizer: false, lateLeft: late })).toEqual({
      kind: 'erase-late',
      late,
    });
  });

  it('release pods first, then wait for them to be gone', () => {
    const facts = { ...start, cachedPods: true, eraseRequest: 'INC-1', tombstones: ['old'] };
    expect(
      walk(facts, { cached: exclusive, pods: [pod('sbx', 0), pod('sbx', 1, { deleting: true })] }),
    ).toEqual([
      'read-incarnation',
      'keep-guard',
      'keep-isolation',
      'gather-evidence',
      'erase',
      'prune',
      'decide',
      'confirm-live',
      'record-decision',
      'list-pods',
      'delete-pod',
      'release-pod',
      'release-pod',
      'remove-guard',
      'await-pods-gone',
    ]);
  });

  it('finish a released sandbox that holds no reference on a LIST of its pods alone', () => {
    const released = { ...start, released: true };
    const unguarded: World = { cached: exclusive, guard: false, isolation: false };
    expect(walk(released, unguarded)).toEqual(['list-pods', 'remove-finalizer', 'finished']);
    const going = pod('sbx', 0, { deleting: true, finalizers: [] });
    expect(walk(released, { ...unguarded, pods: [going] })).toEqual(['list-pods', 'await-pods-gone']);
    // A guard the cache still holds is found by name: the incarnation first, as for any write by name.
    expect(walk(released, { cached: exclusive }).slice(0, 2)).toEqual(['list-pods', 'read-incarnation']);
    expect(walk(released, { cached: exclusive })).toContain('remove-guard');
    // A NetworkPolicy the cache holds, or may hold (it has not listed), is removed on the way: it has no owner
    // to cascade from, and its removal is bound to the incarnation by its labels, so it needs no read first.
    expect(walk(released, { cached: exclusive, guard: false })).toEqual([
      'list-pods',
      'remove-isolation',
      'remove-finalizer',
      'finished',
    ]);
    // A listed pod still to release: the incarnation and the decision first, as for any release.
    expect(walk(released, { cached: exclusive, pods: [pod('sbx', 0)] }).slice(0, 3)).toEqual([
      'list-pods',
      'read-incarnation',
      'gather-evidence',
    ]);
  });

  it('then, with the pods gone, remove the guard and the policy, erase the index and remove the finalizer last', () => {
    expect(walk(start, { cached: exclusive })).toEqual([
      'read-incarnation',
      'gather-evidence',
      'decide',
      'confirm-live',
      'record-decision',
      'list-pods',
      'remove-guard',
      'remove-isolation',
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('keep the pods’ NetworkPolicy while they stand, and remove it only once a release finds them gone', () => {
    const held = { ...start, cachedPods: true };
    const blocked = walk(held, { cached: foreign });
    expect(blocked.slice(0, 3)).toEqual(['read-incarnation', 'keep-guard', 'keep-isolation']);
    expect(blocked).not.toContain('remove-isolation');
    expect(blocked.at(-1)).toBe('blocked');
    const releasing = walk(held, { cached: exclusive, pods: [pod('sbx', 0)] });
    expect(releasing).not.toContain('remove-isolation');
    expect(releasing.at(-1)).toBe('await-pods-gone');
    // No pod left to isolate: nothing to keep, and no policy the cache holds: nothing to remove.
    const bare = walk(start, { cached: exclusive, isolation: false });
    expect(bare).not.toContain('keep-isolation');
    expect(bare).not.toContain('remove-isolation');
  });

  it('stop at the decision when the cache finds a foreign reference: no LIST, no pod, no namespace read', () => {
    expect(walk(start, { cached: foreign })).toEqual([
      'read-incarnation',
      'gather-evidence',
      'decide',
      'record-decision',
      'blocked',
    ]);
  });

  it('stop when the live LIST contradicts a cache miss', () => {
    expect(walk(start, { cached: exclusive, live: foreign })).toEqual([
      'read-incarnation',
      'gather-evidence',
      'decide',
      'confirm-live',
      'record-decision',
      'blocked',
    ]);
  });

  it('hand a due legacy walk to its lane and end the turn: nothing is read for a decision, nothing decided', () => {
    const facts = { ...start, cachedPods: true, eraseRequest: 'INC-1', tombstones: ['old'] };
    expect(walk(facts, { cached: exclusive, walkDue: true })).toEqual([
      'read-incarnation',
      'keep-guard',
      'keep-isolation',
      'gather-evidence',
      'start-walk',
      'await-walk',
    ]);
    expect(nextDeletionStep({ ...start, incarnation: 'Current', walk: 'under-way' })).toEqual({
      kind: 'await-walk',
    });
  });

  it('keep every tombstone of a sandbox whose history is unknown: the prune only clears the way to a release', () => {
    const unavailable: Verdict = { verdict: 'Unavailable', evidence: 'Ledger', reason: 'no ledger' };
    const facts = { ...start, tombstones: ['own-old'] };
    const walkFailed: LegacyEvidence = {
      kind: 'Reconciled',
      outcome: {
        kind: 'Unavailable',
        owner: undefined,
        reason: 'ledger down',
        stats: { owners: 1, lookedUp: 0, skippedLegacy: 0, timedOut: 0, failed: 1, elapsedMs: 5 },
      },
    };
    for (const legacy of [{ kind: 'NotConfigured' } as const, walkFailed])
      expect(walk(facts, { cached: unavailable, legacy })).not.toContain('prune');
    const walked: LegacyEvidence = {
      kind: 'Reconciled',
      outcome: { kind: 'Complete', stats: { ...walkFailed.outcome.stats, lookedUp: 1, failed: 0 } },
    };
    for (const legacy of [{ kind: 'Marked' } as const, walked])
      expect(walk(facts, { cached: exclusive, legacy })).toContain('prune');
  });

  it('ask the namespace only for a verdict its deletion may lift', () => {
    const unavailable: Verdict = { verdict: 'Unavailable', evidence: 'Ledger', reason: 'no ledger' };
    expect(walk(start, { cached: unavailable }).slice(-2)).toEqual(['check-namespace', 'blocked']);
  });

  it('touch nothing of a stale incarnation, and nothing once the finalizer is gone', () => {
    expect(nextDeletionStep({ ...start, incarnation: 'Replaced' })).toEqual({
      kind: 'stale',
      staleness: 'Replaced',
    });
    expect(nextDeletionStep({ ...start, finalizer: false })).toEqual({ kind: 'finished' });
  });

  it('bind each pod release to the pod incarnation that was deleted: a same-named new pod keeps its finalizer', () => {
    const deleted = pod('sbx', 0, { deleting: true });
    const step = nextDeletionStep({
      ...start,
      incarnation: 'Current',
      evidence,
      cached: { index, verdict: exclusive },
      live: { index, verdict: exclusive },
      recorded: true,
      livePods: [deleted],
      budget: undefined,
    });
    expect(step).toMatchObject({ kind: 'release-pod' });
    const patch = step.kind === 'release-pod' ? step.patch : [];
    expect(patch[0]).toEqual({ op: 'test', path: '/metadata/uid', value: deleted.uid });
    expect(patch.slice(1)).toEqual([
      { op: 'test', path: '/metadata/finalizers', value: deleted.finalizers },
      { op: 'remove', path: '/metadata/finalizers/0' },
    ]);
  });

  it('name every failpoint after a step the classification can return', () => {
    const seen = new Set([
      ...walk(
        { ...start, cachedPods: true, eraseRequest: 'x', tombstones: ['t'] },
        { cached: exclusive, pods: [pod('sbx', 0)] },
      ),
      ...walk(start, { cached: exclusive }),
      ...walk(start, { cached: exclusive, walkDue: true }),
      ...walk({ ...start, claims: 'Delete' }, { cached: exclusive, claims: [claim('work-sbx')] }),
      ...walk(
        { ...start, final: true },
        { cached: foreign, pods: [], late: [{ name: 'late', uid: 'u', resourceVersion: '1' }] },
      ),
    ]);
    for (const step of WRITE_STEPS) expect(seen).toContain(step);
  });

  it('release a verdict the namespace deletion lifts, the whole way', () => {
    const unavailable: Verdict = { verdict: 'Unavailable', evidence: 'Ledger', reason: 'no ledger' };
    expect(walk(start, { cached: unavailable, namespaceLifts: true, pods: [pod('sbx', 0)] })).toEqual([
      'read-incarnation',
      'gather-evidence',
      'decide',
      'record-decision',
      'check-namespace',
      'list-pods',
      'delete-pod',
      'release-pod',
      'remove-guard',
      'await-pods-gone',
    ]);
  });
});

describe('the release steps', () => {
  /** A turn at the release: the decision recorded Exclusive, on a current incarnation. */
  const releasing: DeletionFacts = {
    ...start,
    incarnation: 'Current',
    evidence,
    cached: { index, verdict: exclusive },
    live: { index, verdict: exclusive },
    recorded: true,
  };
  const going = pod('sbx', 0, { deleting: true, finalizers: [] });

  it('pass over a pod already deleting and free of our finalizer: nothing to write for it', () => {
    const second = pod('sbx', 1);
    expect(nextDeletionStep({ ...releasing, livePods: [going, second] })).toEqual({
      kind: 'delete-pod',
      pod: second,
    });
    expect(nextDeletionStep({ ...releasing, livePods: [going] })).toEqual({
      kind: 'await-pods-gone',
      pods: ['sbx-0'],
    });
  });

  it('wait for every listed pod by name, the guard removed first', () => {
    const budget = { name: 'sbx-sandbox', uid: 'pdb' };
    const pods = [going, pod('sbx', 1, { deleting: true, finalizers: [] })];
    expect(nextDeletionStep({ ...releasing, budget, livePods: pods })).toEqual({
      kind: 'remove-guard',
      budget,
    });
    expect(nextDeletionStep({ ...releasing, budget, guardRemoved: true, livePods: pods })).toEqual({
      kind: 'await-pods-gone',
      pods: ['sbx-0', 'sbx-1'],
    });
  });

  it('erase again what changed under the erase of the index, then remove the finalizer naming what was erased', () => {
    const erased = { ...releasing, livePods: [] };
    expect(nextDeletionStep(erased)).toEqual({ kind: 'erase-index' });
    expect(nextDeletionStep({ ...erased, indexErased: { deleted: ['own'], changed: ['late'] } })).toEqual({
      kind: 'erase-again',
      changed: ['late'],
    });
    expect(nextDeletionStep({ ...erased, indexErased: { deleted: ['own', 'late'], changed: [] } })).toEqual({
      kind: 'remove-finalizer',
      erased: ['own', 'late'],
    });
  });

  it('finish a released sandbox by its pods alone: wait for each by name, then remove the finalizer, having erased nothing', () => {
    const released = { ...start, released: true };
    const pods = [going, pod('sbx', 1, { deleting: true, finalizers: [] })];
    expect(nextDeletionStep(released)).toEqual({ kind: 'list-pods' });
    expect(nextDeletionStep({ ...released, livePods: pods })).toEqual({
      kind: 'await-pods-gone',
      pods: ['sbx-0', 'sbx-1'],
    });
    expect(nextDeletionStep({ ...released, livePods: [] })).toEqual({ kind: 'remove-finalizer', erased: [] });
  });
});
