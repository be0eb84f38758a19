/**
 * The deletion of a Sandbox as named steps (docs/deletion.md): a pure classification of what this turn
 * knows into the one next step. The shell (deletion.ts) performs the step, at most one write, adds what it
 * learned to the facts and asks again, until a step ends the turn.
 *
 * Every turn starts from the top with no facts but the sandbox and the cache (level-triggered), so a crash
 * after any step resumes by doing the steps again: each is idempotent. The failpoints are the names of the
 * steps that write (`WRITE_STEPS`), so the crash test covers every one of them by construction.
 *
 * The legacy walk (up to its 20 s budget) is not done in a turn: `start-walk` hands it to its lane
 * (../walk-lane/lane.ts) and `await-walk` ends the turn; the walk's end enqueues the sandbox, and that turn's
 * `gather-evidence` takes the outcome, which `record-decision` persists. Until then nothing is decided.
 */
import { EXCLUSIVITY_FINALIZER } from '../../api/names.ts';
import { historyKnown, type Verdict } from '../../exclusivity/exclusivity.ts';
import { releasedByNamespaceDeletion } from '../../exclusivity/namespace-deletion.ts';
import type { ReferenceIndex } from '../../exclusivity/reference-index.ts';
import { removeFinalizerFromIncarnation, type JsonPatchOp } from '../finalizer.ts';
import type { LegacyResult } from '../walk-lane/evidence.ts';
import type { Erased } from '../erase.ts';
import type { Staleness } from '../incarnation.ts';
import { isReleased, type PodSummary } from '../cache/pod-summary.ts';
import type { Deleted, ListedReference } from '../ports.ts';
import type { MisconfigurationError } from '../../runtime/error-policy.ts';
import type { RetentionPolicy } from '../../api/volume-claims.ts';
import { releasePatch, retainPatch, type ClaimHolder } from '../claims.ts';

/**
 * The steps that write, in the order a deletion takes them: to the API server, and `start-walk` to memory (its
 * failpoint fires once the walk it started has finished and its outcome is kept, not yet persisted).
 */
export const WRITE_STEPS = [
  'keep-guard',
  'keep-isolation',
  'start-walk',
  'erase',
  'prune',
  'record-decision',
  'delete-pod',
  'release-pod',
  'remove-guard',
  'remove-isolation',
  'delete-claim',
  'release-claim',
  'erase-index',
  'remove-finalizer',
  'erase-late',
] as const;
export type WriteStep = (typeof WRITE_STEPS)[number];

export type Decided = { readonly index: ReferenceIndex; readonly verdict: Verdict };

/** What the turn knows. The first six come from the sandbox and the cache; the rest from the steps done. */
export type DeletionFacts = {
  /** Our finalizer is on the sandbox: until it is removed, the deletion is ours to finish. */
  readonly finalizer: boolean;
  /**
   * The cache holds pods of the sandbox not yet deleting: they must not be evictable while they wait. (A pod
   * already deleting is being stopped by its kubelet; an eviction cannot do more to it.)
   */
  readonly cachedPods: boolean;
  /** An administrator's erase request not yet acted on. */
  readonly eraseRequest: string | undefined;
  /** The sandbox's own worktree's tombstones in the cache (names). */
  readonly tombstones: readonly string[];
  /**
   * What the release does with the sandbox's workspace claims (its `whenDeleted`); undefined when it has no
   * claim templates, and then no claim is listed.
   */
  readonly claims?: RetentionPolicy | undefined;
  /** The eviction guard as the cache has it, once the pods are listed. */
  readonly budget: { readonly name: string; readonly uid: string } | undefined;
  /**
   * Once the pods are listed: the sandbox's NetworkPolicy may stand (its cache holds one, or has not listed).
   * It has no owner, so nothing but the release removes it.
   */
  readonly isolation?: boolean;
  /**
   * The recorded decision is Exclusive and every cached pod is released (terminating, without our finalizer):
   * the release is done, and only the pods' going is awaited.
   */
  readonly podsGoing?: boolean;
  /**
   * The recorded decision is Exclusive and the cache holds nothing of the sandbox (no pod, no reference) and
   * recorded none: its release is done, and a consistent LIST of its pods finding none is all that stands
   * before its finalizer goes. The decision is not made again: after the fence it can only be the same, and
   * the pods it released are gone. A listed pod still to release, or a guard the cache still holds, sends the
   * turn the whole way.
   */
  readonly released?: boolean;
  /**
   * The recorded decision is Exclusive: final. It was confirmed on a LIST made after the fence, so a reference
   * written since is an attach that saw the deletion and withdraws (or failed to): the release goes on, and
   * such late references are erased once the finalizer is gone, and reported. Never decided again.
   */
  readonly final?: boolean;

  /** Whether the API server still holds this incarnation, deleting (a live GET). */
  readonly incarnation?: Staleness;
  readonly guardKept?: true;
  /** The guard a setting refuses (only a person can change it): said if the sandbox stays blocked. */
  readonly guardRefused?: MisconfigurationError;
  readonly isolationKept?: true;
  /** The NetworkPolicy a setting refuses: said, as the guard's, if the sandbox stays blocked. */
  readonly isolationRefused?: MisconfigurationError;
  readonly erased?: Erased;
  /** The tombstones the prune deleted (one re-attached since its LIST is kept). */
  readonly pruned?: readonly string[];
  readonly evidence?: LegacyResult;
  /** No evidence yet: a legacy walk is due, or one is under way in its lane. */
  readonly walk?: 'due' | 'under-way';
  /** The decision on the cached index. */
  readonly cached?: Decided;
  /** The decision again on a consistent LIST, when the cache said Exclusive. */
  readonly live?: Decided;
  /** What that LIST returned: the erase of the index deletes these, not a second LIST's. */
  readonly liveListed?: readonly ListedReference[];
  readonly recorded?: true;
  /** A terminating namespace with no reference left lifts this verdict. */
  readonly namespaceLifts?: boolean;
  /**
   * The pods the release acts on, once the deletion is released: the cache's (each delete and release is
   * bound to the pod's uid and finalizers, so a stale entry only fails its write), or, when the cache holds
   * none, a consistent LIST's. So nothing of the index and not the finalizer goes before a LIST found no pod.
   */
  readonly livePods?: readonly PodSummary[];
  /** How many of `livePods` are handled, and whether the next one's delete is done. */
  readonly podsHandled?: number;
  readonly podDeleted?: true;
  readonly guardRemoved?: true;
  readonly isolationRemoved?: true;
  /** The sandbox's claims by a consistent LIST, once its pods are gone; how many are handled; the next deleted. */
  readonly liveClaims?: readonly ClaimHolder[];
  readonly claimsHandled?: number;
  readonly claimDeleted?: true;
  /** What erasing the index deleted, and what it kept because it changed since its LIST. */
  readonly indexErased?: Deleted;
  /**
   * The late references a final erase left (foreign to the sandbox, written after its decision): erased after
   * the finalizer, when the Sandbox is gone. While it stands they are foreign references of a standing sandbox,
   * which the operator's reference review refuses to let anyone delete (controller/reference-review.ts).
   */
  readonly lateLeft?: readonly ListedReference[];
};

export type DeletionStep =
  /** Nothing of ours holds the sandbox (our finalizer is gone): wait for a change. */
  | { readonly kind: 'finished' }
  /** Released, its pods still terminating: nothing to do, not even a read, until their DELETED events. */
  | { readonly kind: 'pods-going' }
  /** Pods and references are found by name: first make sure the API server still holds this incarnation. */
  | { readonly kind: 'read-incarnation' }
  /** The cached Sandbox is gone, replaced or not deleting: wait for the watch to catch up. */
  | { readonly kind: 'stale'; readonly staleness: Exclude<Staleness, 'Current'> }
  | { readonly kind: 'keep-guard' }
  /** The pods' NetworkPolicy, put back if a user or a cascade removed it: held pods never run unisolated. */
  | { readonly kind: 'keep-isolation' }
  | { readonly kind: 'erase'; readonly request: string }
  | { readonly kind: 'prune'; readonly tombstones: readonly string[] }
  /** The legacy evidence: the marker, a walk's kept outcome or a persisted one; else whether a walk is due. */
  | { readonly kind: 'gather-evidence' }
  /** Hand the due walk to its lane: the turn never waits for it. */
  | { readonly kind: 'start-walk' }
  /** A walk is under way: nothing is decided (never Exclusive) until its end enqueues the sandbox again. */
  | { readonly kind: 'await-walk' }
  | { readonly kind: 'decide'; readonly evidence: LegacyResult }
  | { readonly kind: 'confirm-live'; readonly evidence: LegacyResult }
  | { readonly kind: 'record-decision'; readonly decided: Decided; readonly evidence: LegacyResult }
  | { readonly kind: 'check-namespace'; readonly verdict: Verdict }
  /** Not exclusive: nothing is stopped; look again later. */
  | { readonly kind: 'blocked'; readonly verdict: Verdict }
  | { readonly kind: 'list-pods' }
  | { readonly kind: 'delete-pod'; readonly pod: PodSummary }
  | { readonly kind: 'release-pod'; readonly pod: PodSummary; readonly patch: readonly JsonPatchOp[] }
  /** Pods were released this turn: wait for them to be gone before anything of the index goes. */
  | { readonly kind: 'await-pods-gone'; readonly pods: readonly string[] }
  | { readonly kind: 'remove-guard'; readonly budget: { readonly name: string; readonly uid: string } }
  /** The pods are gone: their NetworkPolicy, which no owner's going would take. */
  | { readonly kind: 'remove-isolation' }
  /** The pods are gone: the claims, by a consistent LIST of the sandbox's label. */
  | { readonly kind: 'list-claims' }
  /** Delete: the claim deleted (preconditioned on its uid), then freed of the finalizer. */
  | { readonly kind: 'delete-claim'; readonly claim: ClaimHolder }
  /** Delete: the deleted claim freed of the finalizer; Retain: freed of finalizer and owner, and kept. */
  | {
      readonly kind: 'release-claim';
      readonly claim: ClaimHolder;
      /** Its place in `liveClaims`: the claims before it are handled once it is. */
      readonly index: number;
      readonly patch: readonly JsonPatchOp[];
      readonly retained: boolean;
    }
  | { readonly kind: 'erase-index' }
  /** References written after the fence changed under the erase (their attach withdraws them): erase again. */
  | { readonly kind: 'erase-again'; readonly changed: readonly string[] }
  | { readonly kind: 'remove-finalizer'; readonly erased: readonly string[] }
  /** The finalizer is gone: the late references the final erase left, now of a gone Sandbox. */
  | { readonly kind: 'erase-late'; readonly late: readonly ListedReference[] };

export function nextDeletionStep(facts: DeletionFacts): DeletionStep {
  if (!facts.finalizer)
    return facts.lateLeft !== undefined && facts.lateLeft.length > 0
      ? { kind: 'erase-late', late: facts.lateLeft }
      : { kind: 'finished' };
  if (facts.podsGoing === true && facts.eraseRequest === undefined) return { kind: 'pods-going' };
  // The guard is found by name: removing one the cache still holds needs the incarnation read of the whole way.
  // (The NetworkPolicy's removal is bound to the incarnation by its labels: it needs no read.)
  if (facts.released === true && !facts.budget && (facts.livePods ?? []).every(isReleased))
    return finishStep(facts);
  if (facts.incarnation === undefined) return { kind: 'read-incarnation' };
  if (facts.incarnation !== 'Current') return { kind: 'stale', staleness: facts.incarnation };
  if (facts.cachedPods && !facts.guardKept) return { kind: 'keep-guard' };
  if (facts.cachedPods && !facts.isolationKept) return { kind: 'keep-isolation' };
  if (facts.final === true) return releaseStep(facts);
  // The legacy evidence before anything the decision reads: the erase's LIST, the prune and the cache are
  // then as fresh as they can be when the decision is made, never as old as a walk.
  const { evidence } = facts;
  if (!evidence) {
    if (facts.walk === undefined) return { kind: 'gather-evidence' };
    return facts.walk === 'due' ? { kind: 'start-walk' } : { kind: 'await-walk' };
  }
  if (facts.eraseRequest !== undefined && !facts.erased)
    return { kind: 'erase', request: facts.eraseRequest };
  // The prune only clears the way to a release: of a sandbox whose history is unknown it would only destroy evidence.
  if (facts.tombstones.length > 0 && facts.pruned === undefined && historyKnown(evidence.evidence))
    return { kind: 'prune', tombstones: facts.tombstones };
  if (!facts.cached) return { kind: 'decide', evidence };
  if (facts.cached.verdict.verdict === 'Exclusive' && !facts.live) return { kind: 'confirm-live', evidence };
  const decided = facts.live ?? facts.cached;
  if (!facts.recorded) return { kind: 'record-decision', decided, evidence };
  const { verdict } = decided;
  if (verdict.verdict !== 'Exclusive') {
    // Cheap first: most verdicts are never lifted, and then the namespace is not even read.
    if (!releasedByNamespaceDeletion(verdict, true, 0)) return { kind: 'blocked', verdict };
    if (facts.namespaceLifts === undefined) return { kind: 'check-namespace', verdict };
    if (!facts.namespaceLifts) return { kind: 'blocked', verdict };
  }
  return releaseStep(facts);
}

/**
 * A released sandbox whose pods the cache no longer holds: the consistent LIST of its pods, then, once it lists
 * none, the finalizer. It writes nothing found by name, and the finalizer's removal tests the Sandbox's uid, so
 * it needs no incarnation read: a stale cache only fails the PATCH.
 */
function finishStep(facts: DeletionFacts): DeletionStep {
  const pods = facts.livePods;
  if (!pods) return { kind: 'list-pods' };
  if (pods.length > 0) return { kind: 'await-pods-gone', pods: pods.map((each) => each.name) };
  return isolationStep(facts) ?? claimStep(facts) ?? { kind: 'remove-finalizer', erased: [] };
}

/** The pods' NetworkPolicy, once they are gone: no owner's going takes it. Undefined when none may stand. */
const isolationStep = (facts: DeletionFacts): DeletionStep | undefined =>
  facts.isolation === true && !facts.isolationRemoved ? { kind: 'remove-isolation' } : undefined;

/**
 * The workspace, once the pods that mounted it are gone and never before (an Exclusive verdict, or one the
 * namespace's deletion lifted, is the only way here): each claim deleted then freed of the finalizer (Delete),
 * or freed of finalizer and owner and kept (Retain). Undefined once every claim is handled. Before the index
 * and the finalizer go: a crash after this resumes here, and the Sandbox's going would otherwise cascade to a
 * retained claim through its owner reference.
 */
function claimStep(facts: DeletionFacts): DeletionStep | undefined {
  if (facts.claims === undefined) return undefined;
  const claims = facts.liveClaims;
  if (!claims) return { kind: 'list-claims' };
  const handled = facts.claimsHandled ?? 0;
  const claim = claims[handled];
  if (claim === undefined) return undefined;
  const retained = facts.claims === 'Retain';
  if (!retained && !claim.deleting && !facts.claimDeleted) return { kind: 'delete-claim', claim };
  const patch = retained ? retainPatch(claim) : releasePatch(claim);
  if (patch) return { kind: 'release-claim', claim, index: handled, patch, retained };
  const { claimDeleted: _deleted, ...rest } = facts;
  return claimStep({ ...rest, claimsHandled: handled + 1 });
}

/**
 * Exclusive (or lifted): pods first, each deleted then freed of our finalizer; then the eviction guard, which
 * has nothing left to hold; the NetworkPolicy, the workspace claims and the index only once the pods are gone
 * (a pod deleting still runs until its kubelet stops it).
 */
function releaseStep(facts: DeletionFacts): DeletionStep {
  const pods = facts.livePods;
  if (!pods) return { kind: 'list-pods' };
  const handled = facts.podsHandled ?? 0;
  const pod = pods[handled];
  if (pod !== undefined) {
    if (!pod.deleting && !facts.podDeleted) return { kind: 'delete-pod', pod };
    const patch = removeFinalizerFromIncarnation(pod, EXCLUSIVITY_FINALIZER);
    if (patch) return { kind: 'release-pod', pod, patch };
    const { podDeleted: _deleted, ...rest } = facts;
    return releaseStep({ ...rest, podsHandled: handled + 1 });
  }
  if (facts.budget && !facts.guardRemoved) return { kind: 'remove-guard', budget: facts.budget };
  if (pods.length > 0) return { kind: 'await-pods-gone', pods: pods.map((each) => each.name) };
  const claim = isolationStep(facts) ?? claimStep(facts);
  if (claim) return claim;
  if (!facts.indexErased) return { kind: 'erase-index' };
  if (facts.indexErased.changed.length > 0)
    return { kind: 'erase-again', changed: facts.indexErased.changed };
  return { kind: 'remove-finalizer', erased: facts.indexErased.deleted };
}
