/**
 * The deletion's classification on its own: from what a turn knows to the one next step. `walk` plays a turn
 * by giving each step the facts its shell would learn, so a test reads as the order of the steps.
 */
import { describe, expect, it } from 'vitest';
import {
  nextDeletionStep,
  WRITE_STEPS,
  type DeletionFacts,
  type DeletionStep,
} from '../../../operator/controller/deletion/steps.ts';
import type { LegacyEvidence, Verdict } from '../../../operator/exclusivity/exclusivity.ts';
import type { ReferenceIndex } from '../../../operator/exclusivity/index.ts';
import { pod } from '../builders.ts';
import type { ClaimHolder } from '../../../operator/controller/claims.ts';

const claim = (name: string, overrides: Partial<ClaimHolder> = {}): ClaimHolder => ({
  name,
  uid: `uid-${name}`,
  resourceVersion: '7',
  sandboxLabel: 'sbx',
  labelled: true,
  controller: { kind: 'Sandbox', name: 'sbx', uid: 'sbx-uid' },
  ownerReferences: [
    {
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'Sandbox',
      name: 'sbx',
      uid: 'sbx-uid',
      controller: true,
    },
  ],
  finalizers: ['kubernetes.io/pvc-protection', 'sandbox.agents.dev/exclusivity'],
  deleting: false,
  ...overrides,
});

// Carried through the steps, never read by them. A literal, so loading this file runs no code of the core:
// the mutation run would otherwise count the index's mutants as static and run every test against each.
const index: ReferenceIndex = { overflowed: false, entries: [], attached: 0, detached: 0, bytes: 0 };
const exclusive: Verdict = { verdict: 'Exclusive', evidence: 'Index', reason: 'no foreign reference' };
const foreign: Verdict = {
  verdict: 'Foreign',
  evidence: 'Index',
  blockingReferences: ['r2'],
  blockingCount: 1,
  reason: 'r2 is foreign',
};
const evidence = {
  evidence: { kind: 'Marked' as const },
  reconciliation: { state: 'NotRequired' as const, marker: true },
};

const start: DeletionFacts = {
  finalizer: true,
  cachedPods: false,
  eraseRequest: undefined,
  tombstones: [],
  budget: undefined,
};

type World = {
  readonly cached: Verdict;
  readonly live?: Verdict;
  readonly pods?: DeletionFacts['livePods'];
  /** A legacy walk is due: the turn starts it in its lane and ends. */
  readonly walkDue?: true;
  /** The legacy evidence gather-evidence finds (default: the marker). */
  readonly legacy?: LegacyEvidence;
  /** Whether list-pods finds the eviction guard in the cache (default: it does). */
  readonly guard?: false;
  /** Whether check-namespace finds the namespace terminating with no reference left (default: it does not). */
  readonly namespaceLifts?: true;
  /** What list-claims finds. */
  readonly claims?: DeletionFacts['liveClaims'];
};

/** Plays one turn: each step gets the facts its shell would learn from `world`, until a step ends the turn. */
function walk(facts: DeletionFacts, world: World): string[] {
  const steps: string[] = [];
  for (let guard = 0; guard < 50; guard += 1) {
    const step: DeletionStep = nextDeletionStep(facts);
    steps.push(step.kind);
    const learned = learn(step, facts, world);
    if (learned === undefined) return steps;
    facts = learned;
  }
  throw new Error(`no end after ${steps.join(', ')}`);
}

function learn(step: DeletionStep, facts: DeletionFacts, world: World): DeletionFacts | undefined {
  switch (step.kind) {
    case 'read-incarnation':
      return { ...facts, incarnation: 'Current' };
    case 'keep-guard':
      return { ...facts, guardKept: true };
    case 'gather-evidence':
      if (world.walkDue) return { ...facts, walk: 'due' };
      return { ...facts, evidence: world.legacy ? { ...evidence, evidence: world.legacy } : evidence };
    case 'start-walk':
      return { ...facts, walk: 'under-way' };
    case 'erase':
      return { ...facts, erased: { request: step.request, erased: 1, remaining: [] } };
    case 'prune':
      return { ...facts, pruned: step.tombstones };
    case 'decide':
      return { ...facts, cached: { index, verdict: world.cached } };
    case 'confirm-live':
      return { ...facts, live: { index, verdict: world.live ?? world.cached } };
    case 'record-decision':
      return { ...facts, recorded: true };
    case 'check-namespace':
      return { ...facts, namespaceLifts: world.namespaceLifts ?? false };
    case 'list-pods':
      return {
        ...facts,
        livePods: world.pods ?? [],
        budget: world.guard === false ? undefined : { name: 'sbx-sandbox', uid: 'pdb' },
      };
    case 'delete-pod':
      return { ...facts, podDeleted: true };
    case 'release-pod': {
      const { podDeleted: _deleted, ...rest } = facts;
      return { ...rest, podsHandled: (facts.podsHandled ?? 0) + 1 };
    }
    case 'remove-guard':
      return { ...facts, guardRemoved: true };
    case 'list-claims':
      return { ...facts, liveClaims: world.claims ?? [] };
    case 'delete-claim':
      return { ...facts, claimDeleted: true };
    case 'release-claim': {
      const { claimDeleted: _deleted, ...rest } = facts;
      return { ...rest, claimsHandled: step.index + 1 };
    }
    case 'erase-index':
      return { ...facts, indexErased: { deleted: ['own'], changed: [] } };
    case 'remove-finalizer':
      return { ...facts, finalizer: false };
    case 'finished':
    case 'pods-going':
    case 'stale':
    case 'blocked':
    case 'await-pods-gone':
    case 'erase-again':
    case 'await-walk':
      return undefined;
  }
}

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
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('release pods first, then wait for them to be gone', () => {
    const facts = { ...start, cachedPods: true, eraseRequest: 'INC-1', tombstones: ['old'] };
    expect(
      walk(facts, { cached: exclusive, pods: [pod('sbx', 0), pod('sbx', 1, { deleting: true })] }),
    ).toEqual([
      'read-incarnation',
      'keep-guard',
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
    const unguarded: World = { cached: exclusive, guard: false };
    expect(walk(released, unguarded)).toEqual(['list-pods', 'remove-finalizer', 'finished']);
    const going = pod('sbx', 0, { deleting: true, finalizers: [] });
    expect(walk(released, { ...unguarded, pods: [going] })).toEqual(['list-pods', 'await-pods-gone']);
    // A guard the cache still holds is found by name: the incarnation first, as for any write by name.
    expect(walk(released, { cached: exclusive }).slice(0, 2)).toEqual(['list-pods', 'read-incarnation']);
    expect(walk(released, { cached: exclusive })).toContain('remove-guard');
    // A listed pod still to release: the incarnation and the decision first, as for any release.
    expect(walk(released, { cached: exclusive, pods: [pod('sbx', 0)] }).slice(0, 3)).toEqual([
      'list-pods',
      'read-incarnation',
      'gather-evidence',
    ]);
  });

  it('then, with the pods gone, remove the guard, erase the index and remove the finalizer last', () => {
    expect(walk(start, { cached: exclusive })).toEqual([
      'read-incarnation',
      'gather-evidence',
      'decide',
      'confirm-live',
      'record-decision',
      'list-pods',
      'remove-guard',
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
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

describe('the workspace claims of a released sandbox', () => {
  const released = { cached: exclusive, pods: [pod('sbx', 0)] } as const;
  const tail = (steps: string[]) => steps.slice(steps.indexOf('remove-guard'));

  it('are deleted after the pods and their guard, then freed, and before the index (Delete)', () => {
    expect(
      tail(walk({ ...start, claims: 'Delete' }, { ...released, claims: [claim('a-sbx'), claim('b-sbx')] })),
    ).toEqual(['remove-guard', 'await-pods-gone']);
    // The next turn: the pods are gone.
    expect(
      walk({ ...start, claims: 'Delete' }, { cached: exclusive, claims: [claim('a-sbx'), claim('b-sbx')] }),
    ).toEqual([
      'read-incarnation',
      'gather-evidence',
      'decide',
      'confirm-live',
      'record-decision',
      'list-pods',
      'remove-guard',
      'list-claims',
      'delete-claim',
      'release-claim',
      'delete-claim',
      'release-claim',
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('are released and kept, never deleted (Retain)', () => {
    const steps = walk(
      { ...start, claims: 'Retain' },
      { cached: exclusive, guard: false, claims: [claim('a-sbx')] },
    );
    expect(steps.slice(steps.indexOf('list-pods'))).toEqual([
      'list-pods',
      'list-claims',
      'release-claim',
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('are never listed nor touched without an Exclusive verdict', () => {
    const steps = walk({ ...start, claims: 'Delete' }, { cached: foreign, claims: [claim('a-sbx')] });
    expect(steps).not.toContain('list-claims');
    expect(steps.at(-1)).toBe('blocked');
  });

  it('are not listed for a sandbox without claim templates', () => {
    expect(walk(start, { cached: exclusive })).not.toContain('list-claims');
  });

  it('skip a claim already deleting and free of the finalizer, and free a deleting one that holds it', () => {
    const going = claim('a-sbx', { deleting: true, finalizers: ['kubernetes.io/pvc-protection'] });
    const held = claim('b-sbx', { deleting: true });
    const steps = walk(
      { ...start, claims: 'Delete' },
      { cached: exclusive, guard: false, claims: [going, held] },
    );
    expect(steps.slice(steps.indexOf('list-claims'))).toEqual([
      'list-claims',
      'release-claim',
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('are handled on the finishing path too (a crash after the pods went, before the claims)', () => {
    const steps = walk(
      { ...start, claims: 'Delete', released: true, final: true },
      { cached: exclusive, guard: false, claims: [claim('a-sbx')] },
    );
    expect(steps).toEqual([
      'list-pods',
      'list-claims',
      'delete-claim',
      'release-claim',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('bind a Retain release to the version read and a Delete release to the uid and finalizers read', () => {
    const retainStep = nextDeletionStep({
      ...start,
      claims: 'Retain',
      incarnation: 'Current',
      final: true,
      livePods: [],
      liveClaims: [claim('a-sbx')],
    });
    expect(retainStep).toMatchObject({ kind: 'release-claim', retained: true });
    expect(retainStep.kind === 'release-claim' ? retainStep.patch : []).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/metadata/ownerReferences', value: [] },
      { op: 'add', path: '/metadata/finalizers', value: ['kubernetes.io/pvc-protection'] },
    ]);
    const deleteStep = nextDeletionStep({
      ...start,
      claims: 'Delete',
      incarnation: 'Current',
      final: true,
      livePods: [],
      liveClaims: [claim('a-sbx')],
      claimDeleted: true,
    });
    expect(deleteStep.kind === 'release-claim' ? deleteStep.patch : []).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-a-sbx' },
      { op: 'test', path: '/metadata/finalizers', value: claim('a-sbx').finalizers },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
  });
});
