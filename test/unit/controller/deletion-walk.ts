/**
 * The deletion's classification played as a turn, for the steps' unit tests: `walk` gives each step the facts
 * its shell would learn from a `World`, so a test reads as the order of the steps.
 */
import {
  nextDeletionStep,
  type DeletionFacts,
  type DeletionStep,
} from '../../../operator/controller/deletion/steps.ts';
import type { LegacyEvidence, Verdict } from '../../../operator/exclusivity/exclusivity.ts';
import type { ReferenceIndex } from '../../../operator/exclusivity/index.ts';
import type { ClaimHolder } from '../../../operator/controller/claims.ts';

export const claim = (name: string, overrides: Partial<ClaimHolder> = {}): ClaimHolder => ({
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
export const index: ReferenceIndex = { overflowed: false, entries: [], attached: 0, detached: 0, bytes: 0 };
export const exclusive: Verdict = { verdict: 'Exclusive', evidence: 'Index', reason: 'no foreign reference' };
export const foreign: Verdict = {
  verdict: 'Foreign',
  evidence: 'Index',
  blockingReferences: ['r2'],
  blockingCount: 1,
  reason: 'r2 is foreign',
};
export const evidence = {
  evidence: { kind: 'Marked' as const },
  reconciliation: { state: 'NotRequired' as const, marker: true },
};

export const start: DeletionFacts = {
  finalizer: true,
  cachedPods: false,
  eraseRequest: undefined,
  tombstones: [],
  budget: undefined,
};

export type World = {
  readonly cached: Verdict;
  readonly live?: Verdict;
  readonly pods?: DeletionFacts['livePods'];
  /** A legacy walk is due: the turn starts it in its lane and ends. */
  readonly walkDue?: true;
  /** The legacy evidence gather-evidence finds (default: the marker). */
  readonly legacy?: LegacyEvidence;
  /** Whether list-pods finds the eviction guard in the cache (default: it does). */
  readonly guard?: false;
  /** Whether list-pods finds the NetworkPolicy may stand (default: it may). */
  readonly isolation?: false;
  /** Whether check-namespace finds the namespace terminating with no reference left (default: it does not). */
  readonly namespaceLifts?: true;
  /** What list-claims finds. */
  readonly claims?: DeletionFacts['liveClaims'];
  /** The late references a final erase-index lists (foreign, written after the decision). */
  readonly late?: DeletionFacts['lateLeft'];
};

/** Plays one turn: each step gets the facts its shell would learn from `world`, until a step ends the turn. */
export function walk(facts: DeletionFacts, world: World): string[] {
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
    case 'keep-isolation':
      return { ...facts, isolationKept: true };
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
        isolation: world.isolation !== false,
      };
    case 'delete-pod':
      return { ...facts, podDeleted: true };
    case 'release-pod': {
      const { podDeleted: _deleted, ...rest } = facts;
      return { ...rest, podsHandled: (facts.podsHandled ?? 0) + 1 };
    }
    case 'remove-guard':
      return { ...facts, guardRemoved: true };
    case 'remove-isolation':
      return { ...facts, isolationRemoved: true };
    case 'list-claims':
      return { ...facts, liveClaims: world.claims ?? [] };
    case 'delete-claim':
      return { ...facts, claimDeleted: true };
    case 'release-claim': {
      const { claimDeleted: _deleted, ...rest } = facts;
      return { ...rest, claimsHandled: step.index + 1 };
    }
    case 'erase-index':
      return {
        ...facts,
        indexErased: { deleted: ['own'], changed: [] },
        ...(facts.final === true ? { lateLeft: world.late ?? [] } : {}),
      };
    case 'remove-finalizer':
      return { ...facts, finalizer: false };
    case 'erase-late':
      return { ...facts, lateLeft: [] };
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
