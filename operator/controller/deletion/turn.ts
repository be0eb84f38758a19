/**
 * Deleting a Sandbox: the shell of the state machine in steps.ts. Each turn starts from the sandbox
 * and the cache, asks `nextDeletionStep` what to do, does it (at most one write), and asks again. The steps,
 * what each writes and why the order is safe are in docs/deletion.md.
 *
 * The deletionTimestamp is the fence: attaches that see it withdraw (see operator/client), so a consistent
 * LIST made after it sees every reference an attach could still have made.
 */
import type { Logger } from 'pino';
import { EXCLUSIVITY_FINALIZER } from '../../api/names.ts';
import type { SandboxState, SessionReference } from '../../api/objects.ts';
import type { MalformedObjectError } from '../../api/parse.ts';
import { decideExclusivity, type Verdict } from '../../exclusivity/exclusivity.ts';
import { releasedByNamespaceDeletion } from '../../exclusivity/namespace-deletion.ts';
import { isForeignReference } from '../../exclusivity/foreign.ts';
import { referenceEntryOf } from '../../exclusivity/reference.ts';
import { buildReferenceIndex, type ReferenceIndex } from '../../exclusivity/reference-index.ts';
import { tombstonesToPrune } from '../../exclusivity/prune.ts';
import { awaitChange, requeueAfter, type Action } from '../../runtime/action.ts';
import { KubeRequestError } from '../../kube/errors.ts';
import type { ReconcilerContext } from '../context.ts';
import { currentIndex } from '../current-index.ts';
import { isReleased, type PodSummary } from '../cache/pod-summary.ts';
import { nextDeletionStep, type DeletionFacts, type DeletionStep } from './steps.ts';
import { recordDecision } from './record.ts';
import { eraseReferences } from '../erase.ts';
import { eraseLate, lateErase } from './late-references.ts';
import { incarnationOf, stalenessOf } from '../incarnation.ts';
import { turnReads, type TurnReads } from './read-ahead.ts';
import { removeFinalizerPatch } from '../finalizer.ts';
import { hasMarker, legacyEvidence, type LegacyResult } from '../walk-lane/evidence.ts';
import { capacityLatch, inheritedErase, pendingErase } from '../lifecycle.ts';
import type { ListedReference } from '../ports.ts';
import { keyOf } from '../cache/store.ts';
import { claimPolicy, isClaimStep, performClaimStep } from './claims.ts';
import { isProtectionStep, performProtectionStep } from './protections.ts';

/** A retry after references changed under the erase (their attaches are withdrawing them). */
const ERASE_AGAIN_MS = 1_000;

export async function reconcileDeletion(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  log: Logger,
): Promise<Action> {
  const pods = cachedPods(ctx, sandbox);
  const recordedExclusive = sandbox.status?.decision?.verdict === 'Exclusive';
  const eraseRequest = pendingErase(sandbox);
  let facts: DeletionFacts = {
    finalizer: sandbox.metadata.finalizers?.includes(EXCLUSIVITY_FINALIZER) ?? false,
    cachedPods: pods.some((pod) => !pod.deleting),
    podsGoing: recordedExclusive && pods.length > 0 && pods.every(isReleased),
    final: recordedExclusive,
    released:
      recordedExclusive && eraseRequest === undefined && pods.length === 0 && nothingReferenced(ctx, sandbox),
    eraseRequest,
    tombstones: ownTombstones(ctx, sandbox),
    budget: undefined,
    claims: claimPolicy(sandbox),
  };
  const reads = turnReads();
  for (;;) {
    const step = nextDeletionStep(facts);
    log.debug({ step: step.kind }, 'deletion step');
    const next = await perform(ctx, sandbox, step, facts, reads, log);
    if ('kind' in next) return next;
    facts = next;
  }
}

const cachedPods = (ctx: ReconcilerContext, sandbox: SandboxState): PodSummary[] =>
  ctx.store.pods(keyOf(sandbox.metadata.namespace, sandbox.metadata.name));

/**
 * Whether the release takes a consistent LIST of the pods: it acts on the cache's pods when the cache holds
 * any (what it missed, the finishing turn's LIST finds: steps.ts), and lists only when it holds none.
 */
const listsPods = (ctx: ReconcilerContext, sandbox: SandboxState, facts: DeletionFacts): boolean =>
  !facts.livePods && cachedPods(ctx, sandbox).length === 0;

/** No reference of the sandbox in the cache (readable or not), and none in the index its status recorded. */
function nothingReferenced(ctx: ReconcilerContext, sandbox: SandboxState): boolean {
  const key = keyOf(sandbox.metadata.namespace, sandbox.metadata.name);
  const recorded = sandbox.status?.references;
  return (
    (recorded?.attached ?? 0) + (recorded?.detached ?? 0) === 0 &&
    ctx.store.references(key).length === 0 &&
    ctx.store.unreadableReferences(key).length === 0
  );
}

const ownTombstones = (ctx: ReconcilerContext, sandbox: SandboxState) =>
  tombstonesToPrune(
    ctx.store.references(keyOf(sandbox.metadata.namespace, sandbox.metadata.name)),
    sandbox.spec.worktree,
  ).map((entry) => entry.name);

/** Does one step: returns the facts it adds, or the Action that ends the turn. */
async function perform(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  step: DeletionStep,
  facts: DeletionFacts,
  reads: TurnReads,
  log: Logger,
): Promise<DeletionFacts | Action> {
  const { namespace, name } = sandbox.metadata;
  if (isClaimStep(step)) return performClaimStep(ctx, sandbox, step, facts, log);
  if (isProtectionStep(step)) return performProtectionStep(ctx, sandbox, step, facts, log);
  switch (step.kind) {
    case 'finished':
      return awaitChange();
    case 'pods-going':
      // The pod watch's DELETED event brings the turn that finishes; the resync is only the backstop.
      return requeueAfter(ctx.timing.resyncMs);
    case 'read-incarnation': {
      const live = ctx.ports.sandboxes.readLive(namespace, name);
      readAhead(ctx, sandbox, facts, reads);
      return { ...facts, incarnation: stalenessOf(sandbox, await live, facts.eraseRequest) };
    }
    case 'stale':
      log.info(
        { staleness: step.staleness },
        'the cached Sandbox lags the one the API server holds; waiting for the watch',
      );
      return awaitChange();
    case 'erase': {
      const erased = await eraseReferences(ctx, sandbox, step.request, log);
      ctx.failpoint(step.kind);
      return { ...facts, erased, tombstones: ownTombstones(ctx, sandbox) };
    }
    case 'prune':
      return { ...facts, pruned: await prune(ctx, sandbox, log) };
    case 'gather-evidence': {
      const look = legacyEvidence(ctx, sandbox, true);
      if (look.kind === 'ready') return { ...facts, evidence: look.result };
      return { ...facts, walk: look.kind === 'walk-due' ? 'due' : 'under-way' };
    }
    case 'start-walk':
      startWalk(ctx, sandbox, log);
      return { ...facts, walk: 'under-way' };
    case 'await-walk':
      // Its end enqueues this sandbox; the resync is only the backstop.
      log.info(
        { reconciliation: sandbox.status?.reconciliation?.state },
        'deletion not decided: its legacy walk is under way, and only its outcome can clear the sandbox',
      );
      return requeueAfter(ctx.timing.resyncMs);
    case 'decide': {
      const index = await currentIndex(ctx, sandbox, facts.erased, new Set(facts.pruned));
      const unreadable = ctx.store.unreadableReferences(keyOf(namespace, name));
      return { ...facts, cached: { index, verdict: decide(sandbox, step.evidence, index, unreadable) } };
    }
    case 'confirm-live': {
      const live = await reads.references.take(() => ctx.ports.references.listLive(namespace, name));
      const entries = live.flatMap((parsed) => (parsed.ok ? [referenceEntryOf(parsed.value)] : []));
      const latch = facts.erased === undefined ? capacityLatch(sandbox.status) : undefined;
      const index = buildReferenceIndex(entries, ctx.limits, latch);
      const unreadable = live.flatMap((parsed) => (parsed.ok ? [] : [parsed.error]));
      const verdict = decide(sandbox, step.evidence, index, unreadable);
      log.info(
        { liveReferences: live.length, verdict: verdict.verdict },
        'index miss confirmed against a consistent LIST',
      );
      const liveListed = live.flatMap((parsed) => (parsed.ok ? [listedOf(parsed.value)] : []));
      return { ...facts, live: { index, verdict }, liveListed };
    }
    case 'record-decision': {
      const { verdict } = step.decided;
      ctx.recorder.onDecision?.(verdict.verdict, verdict.evidence);
      const erasedFor = facts.eraseRequest ?? inheritedErase(sandbox);
      const decided = { ...step.decided, legacy: step.evidence, erasedFor };
      // Exclusive: the release's LIST, if it takes one, goes with the status write, not after it (read-ahead.ts).
      if (verdict.verdict === 'Exclusive' && listsPods(ctx, sandbox, facts))
        reads.pods.start(() => ctx.ports.pods.listLive(namespace, name));
      await recordDecision(ctx, sandbox, decided, log);
      ctx.failpoint(step.kind);
      return { ...facts, recorded: true };
    }
    case 'check-namespace':
      return { ...facts, namespaceLifts: await namespaceLifts(ctx, sandbox, step, log) };
    case 'blocked':
      // Pods that stay, without the guard a policy refuses: a person must act, and the Sandbox says so.
      if (facts.guardRefused) throw facts.guardRefused;
      if (facts.isolationRefused) throw facts.isolationRefused;
      return requeueAfter(ctx.timing.blockedRecheckMs);
    case 'list-pods':
      return {
        ...facts,
        livePods: listsPods(ctx, sandbox, facts)
          ? await reads.pods.take(() => ctx.ports.pods.listLive(namespace, name))
          : cachedPods(ctx, sandbox),
        budget: ctx.store.budget(keyOf(namespace, name)),
        isolation: ctx.ports.networkPolicies?.mayStand({ namespace, name }) ?? false,
      };
    case 'delete-pod':
      await ctx.ports.pods.delete(namespace, step.pod.name, step.pod.uid);
      ctx.failpoint(step.kind);
      return { ...facts, podDeleted: true };
    case 'release-pod': {
      await ctx.ports.pods.patchMetadata(namespace, step.pod.name, step.patch);
      ctx.failpoint(step.kind);
      const { podDeleted: _done, ...rest } = facts;
      return { ...rest, podsHandled: (facts.podsHandled ?? 0) + 1 };
    }
    case 'await-pods-gone':
      // No poll: each pod's DELETED event enqueues this sandbox, and that turn finishes the deletion.
      log.info({ pods: step.pods }, 'sandbox pods released; waiting for them to be gone');
      return requeueAfter(ctx.timing.resyncMs);
    case 'erase-index': {
      // The LIST the decision was confirmed on, when this turn made one: after the fence, so a reference
      // written since is an attach that withdraws it; and each delete is preconditioned on what was listed.
      // A final turn made no LIST: it takes its own, to delete what it lists and name the late among them.
      const final =
        facts.final === true
          ? lateErase(await ctx.ports.references.listLive(namespace, name), sandbox)
          : undefined;
      const indexErased = await ctx.ports.references.deleteAll(
        namespace,
        name,
        final?.own ?? facts.liveListed,
      );
      ctx.failpoint(step.kind);
      return { ...facts, indexErased, ...(final ? { lateLeft: final.late } : {}) };
    }
    case 'erase-again':
      log.info(
        { changedSinceListed: step.changed },
        'references changed while the index was erased; erasing again',
      );
      return requeueAfter(ERASE_AGAIN_MS);
    case 'remove-finalizer':
      return removeFinalizer(ctx, sandbox, facts, step.erased, log);
    case 'erase-late':
      await eraseLate(ctx, sandbox, step.late, log);
      return { ...facts, lateLeft: [] };
  }
}

/**
 * Starts, beside the incarnation GET, the LISTs this turn takes if its decision is Exclusive: the confirming
 * LIST when no walk, erase or prune comes first and the cache holds no foreign reference; and, when an earlier
 * turn released the pods and they are gone from the cache, the pods' LIST this finishing turn takes too.
 */
function readAhead(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  facts: DeletionFacts,
  reads: TurnReads,
): void {
  const { namespace, name } = sandbox.metadata;
  if (facts.final === true) {
    // Decided: no confirming LIST; only the release's own LIST of the pods, when it takes one.
    if (listsPods(ctx, sandbox, facts)) reads.pods.start(() => ctx.ports.pods.listLive(namespace, name));
    return;
  }
  if (facts.eraseRequest !== undefined || facts.tombstones.length > 0 || !hasMarker(ctx, sandbox)) return;
  const target = { worktree: sandbox.spec.worktree };
  if (ctx.store.references(keyOf(namespace, name)).some((entry) => isForeignReference(entry, target))) return;
  reads.references.start(() => ctx.ports.references.listLive(namespace, name));
}

function startWalk(ctx: ReconcilerContext, sandbox: SandboxState, log: Logger): void {
  // A due walk implies a configured ledger (../walk-lane/evidence.ts); without one the sandbox fails closed.
  if (!ctx.legacy) throw new Error('a legacy walk is due but no session ledger is configured');
  ctx.legacy.start(sandbox, log, () => ctx.failpoint('start-walk'));
}

const listedOf = ({ metadata }: SessionReference): ListedReference => ({
  name: metadata.name,
  uid: metadata.uid ?? '',
  resourceVersion: metadata.resourceVersion ?? '',
});

function decide(
  sandbox: SandboxState,
  evidence: LegacyResult,
  index: ReferenceIndex,
  unreadable: readonly MalformedObjectError[],
): Verdict {
  const target = { worktree: sandbox.spec.worktree };
  return decideExclusivity({ index, target, legacy: evidence.evidence, unreadable });
}

/** A terminating namespace lifts the verdicts only an administrator could clear, once no reference is left. */
async function namespaceLifts(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  step: Extract<DeletionStep, { kind: 'check-namespace' }>,
  log: Logger,
): Promise<boolean> {
  const { namespace, name } = sandbox.metadata;
  if (!(await ctx.ports.namespaces.isTerminating(namespace))) return false;
  const left = (await ctx.ports.references.listLive(namespace, name)).length;
  if (!releasedByNamespaceDeletion(step.verdict, true, left)) return false;
  log.warn(
    { verdict: step.verdict.verdict, reason: step.verdict.reason },
    'namespace is being deleted and no reference is left; releasing despite the verdict',
  );
  return true;
}

/** The names of the worktree's own tombstones now gone; one re-attached since the LIST is kept. */
async function prune(ctx: ReconcilerContext, sandbox: SandboxState, log: Logger): Promise<readonly string[]> {
  const { namespace, name } = sandbox.metadata;
  const { worktree } = sandbox.spec;
  if (worktree === undefined) return []; // never classified so: a sandbox without a worktree has no own tombstones
  const { deleted, changed } = await ctx.ports.references.pruneTombstones(namespace, name, worktree);
  ctx.failpoint('prune');
  log.info(
    { pruned: deleted, changedSinceListed: changed, worktree },
    'pruned the worktree’s own tombstones',
  );
  return deleted;
}

async function removeFinalizer(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  facts: DeletionFacts,
  deleted: readonly string[],
  log: Logger,
): Promise<DeletionFacts> {
  const patch = removeFinalizerPatch(sandbox.metadata, EXCLUSIVITY_FINALIZER);
  try {
    if (patch) await ctx.ports.sandboxes.patchMetadata(incarnationOf(sandbox), patch);
  } catch (error) {
    // Gone already: an earlier turn's removal landed and the cache had yet to see it. Finished, not failed.
    if (!(error instanceof KubeRequestError && error.notFound)) throw error;
    log.debug('the Sandbox is gone already: its deletion was finished by an earlier turn');
    return { ...facts, finalizer: false };
  }
  ctx.failpoint('remove-finalizer');
  // The count the API server answered to the erase, not a cache the erase just changed underneath. One
  // Event per deletion (`Releasing`, with the decision); the end is this log line and the Sandbox's going.
  log.info(
    { erasedReferences: deleted.length },
    'sandbox released: pods gone, references erased, finalizer removed',
  );
  return { ...facts, finalizer: false };
}
