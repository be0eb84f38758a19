/**
 * Reconciles one Sandbox, level-triggered: everything is recomputed from the cache and the API server, never
 * from the event that caused the call. A deleting Sandbox goes to the deletion turn (deletion/); a live one to
 * the live turn (live/): its finalizer, its marker status, its eviction guard and pods, automatic cleanup.
 */
import type { Logger } from 'pino';
import { awaitChange, type Action } from '../runtime/action.ts';
import type { MalformedObjectError } from '../api/parse.ts';
import { API_VERSION, EXCLUSIVITY_FINALIZER, SANDBOX } from '../api/names.ts';
import { MisconfigurationError } from '../runtime/error-policy.ts';
import type { ReconcilerContext } from './context.ts';
import { releaseOrphans } from './deletion/orphans.ts';
import { reconcileDeletion } from './deletion/turn.ts';
import { reconcileLive } from './live/turn.ts';

export async function reconcileSandbox(ctx: ReconcilerContext, key: string, log: Logger): Promise<Action> {
  const parsed = ctx.store.sandbox(key);
  if (!parsed) {
    ctx.misconfigurations.forget(key);
    ctx.legacy?.forget(key);
    return releaseOrphans(ctx, key, ctx.store.pods(key), log);
  }
  // Not the operator's namespace (the per-namespace opt-in): its writes there would be refused anyway.
  if (ctx.unmanaged?.skips(key.slice(0, key.indexOf('/')), log) === true) return awaitChange();
  if (!parsed.ok) return leaveUnreadable(ctx, key, parsed.error);
  const sandbox = parsed.value;
  if (sandbox.metadata.deletionTimestamp !== undefined) {
    // Stripped of our finalizer while being deleted, it never decides again: its pods are orphans.
    if (!(sandbox.metadata.finalizers ?? []).includes(EXCLUSIVITY_FINALIZER))
      return releaseOrphans(ctx, key, ctx.store.pods(key), log);
    return reconcileDeletion(ctx, sandbox, log);
  }
  return reconcileLive(ctx, sandbox, log);
}

/**
 * Nothing of a sandbox we cannot read is released (its pods keep their finalizers), and that is said on the
 * object (a Warning Event: its status cannot be written from what was not read) and once in the log, as a
 * misconfiguration: only a person can fix the field. A change of the Sandbox is looked at at once.
 */
function leaveUnreadable(ctx: ReconcilerContext, key: string, error: MalformedObjectError): never {
  const [namespace = '', name = ''] = key.split('/');
  const refused = `${error.message}; the operator leaves the sandbox untouched (its pods stay, nothing is released)`;
  const fix =
    `correct ${error.field} (kubectl edit sandbox ${name} -n ${namespace}): the API server stored a ` +
    `value the operator cannot read (written before the CRD checked it, or by another version of the CRD)`;
  ctx.ports.events.record(
    { kind: SANDBOX.kind, apiVersion: API_VERSION, namespace, name, uid: error.identity.uid },
    'Warning',
    'Unreadable',
    `${refused}; fix: ${fix}`,
  );
  throw new MisconfigurationError({ reason: 'Unreadable', refused, fix }, { cause: error });
}
