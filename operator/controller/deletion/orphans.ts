/**
 * Pods of a Sandbox that no longer exists (issue 25, #6). A Sandbox vanishes without our decision only when
 * its finalizer was stripped: by anyone while its namespace terminates (guard protection allows it then), or
 * by an administrator. Its pods keep our finalizer, and pod protection refuses their DELETE to everyone but
 * the operator, so a terminating namespace would never finish. There its deletion is the administrator's and
 * takes every reference with it: the pods are released, as a namespace's deletion releases a Sandbox that
 * only it could clear. Anywhere else nothing is decided without the Sandbox: they are kept and it is said.
 */
import type { Logger } from 'pino';
import { EXCLUSIVITY_FINALIZER } from '../../api/names.ts';
import { awaitChange, requeueAfter, type Action } from '../../runtime/action.ts';
import type { PodSummary } from '../cache/pod-summary.ts';
import type { ReconcilerContext } from '../context.ts';
import { removeFinalizerFromIncarnation } from '../finalizer.ts';

/** `pods`: the cache's pods of one sandbox name (at least one), whose Sandbox the cache does not hold. */
export async function releaseOrphans(
  ctx: ReconcilerContext,
  pods: readonly [PodSummary, ...PodSummary[]],
  log: Logger,
): Promise<Action> {
  const { namespace, sandbox } = pods[0];
  const held = pods.filter((pod) => pod.finalizers.includes(EXCLUSIVITY_FINALIZER));
  if (held.length === 0) return awaitChange();
  // The cache may only lag: a Sandbox the API server still holds (any incarnation) is its own turn's.
  if ((await ctx.ports.sandboxes.readLive(namespace, sandbox)) !== undefined) return awaitChange();
  const names = held.map((pod) => pod.name);
  if (!(await ctx.ports.namespaces.isTerminating(namespace))) {
    log.warn(
      { pods: names },
      'pods of a Sandbox that no longer exists hold the exclusivity finalizer; kept, since nothing can be decided ' +
        'without their Sandbox: an administrator releases them with the deletion-override annotation',
    );
    return requeueAfter(ctx.timing.resyncMs);
  }
  for (const pod of held) {
    if (!pod.deleting) await ctx.ports.pods.delete(namespace, pod.name, pod.uid);
    const patch = removeFinalizerFromIncarnation(pod, EXCLUSIVITY_FINALIZER);
    if (patch) await ctx.ports.pods.patchMetadata(namespace, pod.name, patch);
  }
  log.info(
    { pods: names },
    'the namespace is being deleted and the Sandbox of these pods is gone (its finalizer stripped); released them',
  );
  return awaitChange();
}
