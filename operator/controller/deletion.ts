/**
 * Deleting a Sandbox: the exclusivity decision, then either release or block.
 *
 * Expected flow (each step idempotent, so a crash anywhere resumes from the top):
 * 1. The deletionTimestamp is the fence: attaches that see it withdraw (see operator/client).
 * 2. Prune the sandbox's own worktree's tombstones.
 * 3. Decide from the cached index; an index hit keeps the sandbox.
 * 4. Exclusive from the cache is confirmed by a consistent LIST of references (written after the fence, so it
 *    sees every reference an attach could still have made) and decided again.
 * 5. Not exclusive: stop nothing; status says Blocked with DeletionBlocked and an Event names the blockers.
 * 6. Exclusive: delete the pods and remove their finalizers (JSON Patch testing the list), wait for them to
 *    be gone, erase the references, then remove the Sandbox's finalizer.
 */
import type { Logger } from 'pino';
import { EXCLUSIVITY_FINALIZER } from '../api/names.ts';
import type { Sandbox } from '../api/objects.ts';
import { decideExclusivity, type Verdict } from '../index/exclusivity.ts';
import { releasedByNamespaceDeletion } from '../index/namespace-deletion.ts';
import { referenceEntryOf } from '../index/reference.ts';
import { buildReferenceIndex, type ReferenceIndex } from '../index/reference-index.ts';
import { tombstonesToPrune } from '../index/prune.ts';
import type { MalformedObjectError } from '../api/parse.ts';
import { awaitChange, requeueAfter, type Action } from '../runtime/action.ts';
import type { ReconcilerContext } from './context.ts';
import { currentIndex } from './current-index.ts';
import { eraseReferences, sandboxRef } from './erase.ts';
import { keepEvictionGuard } from './eviction-guard.ts';
import { failpoint } from './failpoints.ts';
import { incarnationOf, stalenessOf } from './incarnation.ts';
import { removeFinalizerPatch } from './finalizer.ts';
import { legacyEvidence, type LegacyResult } from './legacy-evidence.ts';
import { capacityLatch, pendingErase } from './lifecycle.ts';
import { decisionOf } from './status.ts';
import { keyOf } from './store.ts';
import { writeStatus } from './write-status.ts';

const WAIT_FOR_PODS_MS = 1_000;

export async function reconcileDeletion(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
  log: Logger,
): Promise<Action> {
  const { namespace, name, finalizers } = sandbox.metadata;
  if (!finalizers?.includes(EXCLUSIVITY_FINALIZER)) return awaitChange();
  // Pods and references are found by name: act only while the API server still holds this incarnation.
  const staleness = stalenessOf(sandbox, await ctx.ports.sandboxes.readLive(namespace, name));
  if (staleness !== 'Current') {
    log.info({ staleness }, 'the cached Sandbox is not the one the API server holds; waiting for the watch');
    return awaitChange();
  }
  const key = keyOf(namespace, name);
  // Until the pods are released, a drain must not be able to evict them (a foreground cascade deletes the
  // budget first, and nothing else would bring it back).
  if (ctx.store.pods(key).length > 0) await keepEvictionGuard(ctx, sandbox, log);
  const request = pendingErase(sandbox);
  const erased = request === undefined ? undefined : await eraseReferences(ctx, sandbox, request, log);
  const latch = erased === undefined ? capacityLatch(sandbox.status) : undefined;
  const target = { worktree: sandbox.spec.worktree };

  const pruned = await pruneOwnTombstones(ctx, sandbox, log);

  const legacy = await legacyEvidence(ctx, sandbox, true, log);
  const decide = (index: ReferenceIndex, unreadable: readonly MalformedObjectError[]) =>
    decideExclusivity({ index, target, legacy: legacy.evidence, unreadable });

  const cacheIndex = await currentIndex(ctx, sandbox, erased, pruned);
  let verdict = decide(cacheIndex, ctx.store.unreadableReferences(key));
  let index = cacheIndex;
  if (verdict.verdict === 'Exclusive') {
    const live = await ctx.ports.references.listLive(namespace, name);
    const entries = live.flatMap((parsed) => (parsed.ok ? [referenceEntryOf(parsed.value)] : []));
    index = buildReferenceIndex(entries, ctx.limits, latch);
    verdict = decide(
      index,
      live.flatMap((parsed) => (parsed.ok ? [] : [parsed.error])),
    );
    log.info(
      { liveReferences: live.length, verdict: verdict.verdict },
      'index miss confirmed against a consistent LIST',
    );
  }
  ctx.recorder.onDecision?.(verdict.verdict, verdict.evidence);
  await recordDecision(ctx, sandbox, { index, legacy, verdict, erasedFor: request }, log);
  failpoint('after-decision');
  if (verdict.verdict !== 'Exclusive' && !(await liftedByNamespaceDeletion(ctx, sandbox, verdict, log)))
    return requeueAfter(ctx.timing.blockedRecheckMs);
  return release(ctx, sandbox, log);
}

/** The names of the worktree's own tombstones now gone; one re-attached since the LIST is kept. */
async function pruneOwnTombstones(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
  log: Logger,
): Promise<ReadonlySet<string>> {
  const { namespace, name } = sandbox.metadata;
  const { worktree } = sandbox.spec;
  const cached = ctx.store.references(keyOf(namespace, name));
  if (worktree === undefined || tombstonesToPrune(cached, worktree).length === 0) return new Set();
  const { deleted, changed } = await ctx.ports.references.pruneTombstones(namespace, name, worktree);
  log.info(
    { pruned: deleted, changedSinceListed: changed, worktree },
    'pruned the worktree’s own tombstones',
  );
  return new Set(deleted);
}

/** A terminating namespace lifts the verdicts only an administrator could clear, once no reference is left. */
async function liftedByNamespaceDeletion(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
  verdict: Verdict,
  log: Logger,
): Promise<boolean> {
  const { namespace, name } = sandbox.metadata;
  if (!releasedByNamespaceDeletion(verdict, true, 0)) return false; // cheap: this verdict is never lifted
  if (!(await ctx.ports.namespaces.isTerminating(namespace))) return false;
  const left = (await ctx.ports.references.listLive(namespace, name)).length;
  if (!releasedByNamespaceDeletion(verdict, true, left)) return false;
  log.warn(
    { verdict: verdict.verdict, reason: verdict.reason },
    'namespace is being deleted and no reference is left; releasing despite the verdict',
  );
  return true;
}

type Decided = {
  readonly index: ReferenceIndex;
  readonly legacy: LegacyResult;
  readonly verdict: Verdict;
  readonly erasedFor: string | undefined;
};

async function recordDecision(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
  decided: Decided,
  log: Logger,
): Promise<void> {
  const { index, legacy, verdict } = decided;
  const previous = sandbox.status?.decision;
  const changed = previous?.verdict !== verdict.verdict || previous.reason !== verdict.reason;
  const decision = changed ? decisionOf(verdict, ctx.now()) : previous;
  await writeStatus(ctx, sandbox, {
    index,
    reconciliation: legacy.reconciliation,
    decision,
    erasedFor: decided.erasedFor,
    pods: ctx.store.pods(keyOf(sandbox.metadata.namespace, sandbox.metadata.name)),
  });
  if (!changed) return;
  if (verdict.verdict === 'Exclusive') {
    log.info(
      { verdict: verdict.verdict, evidence: verdict.evidence, reason: verdict.reason },
      'deletion is exclusive; releasing the sandbox',
    );
    await ctx.ports.events.record(
      sandboxRef(sandbox),
      'Normal',
      'Releasing',
      `exclusive (${verdict.evidence}): ${verdict.reason}`,
    );
  } else {
    const blocking = verdict.verdict === 'Foreign' ? verdict.blockingReferences : [];
    log.info(
      { verdict: verdict.verdict, evidence: verdict.evidence, reason: verdict.reason, blocking },
      'deletion blocked; nothing is stopped',
    );
    await ctx.ports.events.record(
      sandboxRef(sandbox),
      'Warning',
      'DeletionBlocked',
      `${verdict.verdict} (${verdict.evidence}): ${verdict.reason}${blocking.length > 0 ? `; blocking references: ${blocking.join(', ')}` : ''}`,
    );
  }
}

async function release(ctx: ReconcilerContext, sandbox: Sandbox, log: Logger): Promise<Action> {
  const { namespace, name } = sandbox.metadata;
  const pods = await ctx.ports.pods.listLive(namespace, name);
  for (const pod of pods) {
    if (!pod.deleting) await ctx.ports.pods.delete(namespace, pod.name, pod.uid);
    failpoint('after-pod-delete');
    const patch = removeFinalizerPatch(pod, EXCLUSIVITY_FINALIZER);
    if (patch) await ctx.ports.pods.patchMetadata(namespace, pod.name, patch);
    failpoint('after-pod-release');
  }
  if (pods.length > 0) {
    log.info({ pods: pods.map((pod) => pod.name) }, 'sandbox pods released; waiting for them to be gone');
    return requeueAfter(WAIT_FOR_PODS_MS);
  }
  const budget = ctx.store.budget(keyOf(namespace, name));
  if (budget) await ctx.ports.guards.removeDisruptionBudget(namespace, budget.name, budget.uid);
  const { deleted, changed } = await ctx.ports.references.deleteAll(namespace, name);
  failpoint('after-reference-erase');
  if (changed.length > 0) {
    // Written after the decision, so after the fence: their attach withdraws them. Erase again, then release.
    log.info({ changedSinceListed: changed }, 'references changed while the index was erased; erasing again');
    return requeueAfter(WAIT_FOR_PODS_MS);
  }
  const patch = removeFinalizerPatch(sandbox.metadata, EXCLUSIVITY_FINALIZER);
  if (patch) await ctx.ports.sandboxes.patchMetadata(incarnationOf(sandbox), patch);
  log.info(
    { erasedReferences: deleted.length },
    'sandbox released: pods gone, references erased, finalizer removed',
  );
  await ctx.ports.events.record(
    sandboxRef(sandbox),
    'Normal',
    'Released',
    `pods gone; the index (${deleted.length} reference(s)) erased`,
  );
  return awaitChange();
}
