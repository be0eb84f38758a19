/**
 * Reconciles one Sandbox, level-triggered: everything is recomputed from the cache and the API server, never
 * from the event that caused the call. A deleting Sandbox goes to the deletion decision; a live one gets its
 * finalizer, its marker status, its eviction guard and pods, automatic cleanup, and its status.
 */
import type { Logger } from 'pino';
import { EXCLUSIVITY_FINALIZER } from '../api/names.ts';
import type { Sandbox } from '../api/objects.ts';
import { buildReferenceIndex } from '../index/reference-index.ts';
import { awaitChange, requeueAfter, sooner, type Action } from './action.ts';
import type { ReconcilerContext } from './context.ts';
import { reconcileDeletion } from './deletion.ts';
import { eraseReferences, sandboxRef } from './erase.ts';
import { addFinalizerPatch } from './finalizer.ts';
import { legacyEvidence, nextLegacyWalkInMs } from './legacy.ts';
import { capacityLatch, cleanupClock, missingOrdinals, pendingErase } from './lifecycle.ts';
import { sandboxPod } from './pod-template.ts';
import { keyOf } from './store.ts';
import { writeStatus } from './write-status.ts';

export async function reconcileSandbox(ctx: ReconcilerContext, key: string, log: Logger): Promise<Action> {
  const parsed = ctx.store.sandbox(key);
  if (!parsed) return awaitChange();
  if (!parsed.ok) {
    // Nothing of a sandbox we cannot read is released: its pods keep their finalizers.
    log.error({ err: parsed.error, field: parsed.error.field }, 'sandbox is malformed; leaving it untouched');
    return requeueAfter(ctx.timing.resyncMs);
  }
  const sandbox = parsed.value;
  if (sandbox.metadata.deletionTimestamp !== undefined) return reconcileDeletion(ctx, sandbox, log);
  return reconcileLive(ctx, sandbox, log);
}

async function reconcileLive(ctx: ReconcilerContext, sandbox: Sandbox, log: Logger): Promise<Action> {
  const { namespace, name } = sandbox.metadata;
  const addFinalizer = addFinalizerPatch(sandbox.metadata, EXCLUSIVITY_FINALIZER);
  if (addFinalizer) {
    await ctx.ports.sandboxes.patchMetadata(namespace, name, addFinalizer);
    log.info('added the exclusivity finalizer');
    return awaitChange(); // the update event brings the next reconcile
  }
  const key = keyOf(namespace, name);
  const erase = pendingErase(sandbox);
  if (erase !== undefined) await eraseReferences(ctx, sandbox, erase, log);
  const index = buildReferenceIndex(
    ctx.store.references(key),
    ctx.limits,
    erase === undefined ? capacityLatch(sandbox.status) : undefined,
  );
  const { reconciliation } = await legacyEvidence(ctx, sandbox, false, log);
  const pods = ctx.store.pods(key);
  // Status first: a sandbox is born with its marker (or without it) before any pod exists.
  await writeStatus(ctx, sandbox, { index, reconciliation, decision: undefined, pods, erasedFor: erase });

  const missing = missingOrdinals(sandbox, pods);
  if (missing.length > 0) {
    await ctx.ports.guards.ensureDisruptionBudget(sandbox);
    for (const ordinal of missing) {
      const result = await ctx.ports.pods.create(sandboxPod(sandbox, ordinal, ctx.sidecar));
      log.info({ ordinal, result }, 'sandbox pod created');
    }
  }

  const cleanup = cleanupClock(sandbox, index, ctx.now());
  if (cleanup.kind === 'Due') {
    // Fresh state justifies the deletion: the cache's "no reference" is confirmed by a consistent LIST.
    const live = await ctx.ports.references.listLive(namespace, name);
    if (live.length === 0) {
      log.info(
        { since: cleanup.since, policy: sandbox.spec.cleanup.policy },
        'unreferenced past its TTL; deleting the sandbox',
      );
      await ctx.ports.events.record(
        sandboxRef(sandbox),
        'Normal',
        'CleanupStarted',
        `no reference since ${cleanup.since}; deleting`,
      );
      await ctx.ports.sandboxes.delete(namespace, name, sandbox.metadata.uid ?? '');
      return awaitChange();
    }
    log.info(
      { liveReferences: live.length },
      'cleanup due by the cache, but the API server still has references; keeping',
    );
  }

  let next = requeueAfter(ctx.timing.resyncMs);
  if (cleanup.kind === 'Waiting') next = sooner(next, requeueAfter(cleanup.remainingMs));
  const legacyIn = nextLegacyWalkInMs(ctx, reconciliation, false);
  if (legacyIn !== undefined) next = sooner(next, requeueAfter(legacyIn));
  return next;
}
