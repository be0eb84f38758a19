/**
 * Reconciles one Sandbox, level-triggered: everything is recomputed from the cache and the API server, never
 * from the event that caused the call. A deleting Sandbox goes to the deletion turn (deletion/); a live one to
 * the live turn (live/): its finalizer, its marker status, its eviction guard and pods, automatic cleanup.
 */
import type { Logger } from 'pino';
import { awaitChange, requeueAfter, type Action } from '../runtime/action.ts';
import type { ReconcilerContext } from './context.ts';
import { releaseOrphans } from './deletion/orphans.ts';
import { reconcileDeletion } from './deletion/turn.ts';
import { reconcileLive } from './live/turn.ts';

export async function reconcileSandbox(ctx: ReconcilerContext, key: string, log: Logger): Promise<Action> {
  const parsed = ctx.store.sandbox(key);
  if (!parsed) {
    ctx.misconfigurations.forget(key);
    ctx.legacy?.forget(key);
    const [pod, ...more] = ctx.store.pods(key);
    return pod === undefined ? awaitChange() : releaseOrphans(ctx, [pod, ...more], log);
  }
  if (!parsed.ok) {
    // Nothing of a sandbox we cannot read is released: its pods keep their finalizers.
    log.error({ err: parsed.error, field: parsed.error.field }, 'sandbox is malformed; leaving it untouched');
    return requeueAfter(ctx.timing.resyncMs);
  }
  const sandbox = parsed.value;
  if (sandbox.metadata.deletionTimestamp !== undefined) return reconcileDeletion(ctx, sandbox, log);
  return reconcileLive(ctx, sandbox, log);
}
