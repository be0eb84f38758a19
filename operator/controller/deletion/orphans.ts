/**
 * Pods of a Sandbox that no longer exists (issue 25, #6), or whose deletion is no longer ours (`decidesItself`).
 * A Sandbox vanishes without our decision only when its finalizer was stripped: by anyone while its namespace terminates (guard protection allows it then), or
 * by an administrator. Its pods keep our finalizer, and pod protection refuses their DELETE to everyone but
 * the operator, so a terminating namespace would never finish. There its deletion is the administrator's and
 * takes every reference with it: the pods are released, as a namespace's deletion releases a Sandbox that
 * only it could clear. Anywhere else nothing is decided without the Sandbox: they are kept and it is said.
 *
 * Its workspace claims (issue 27) are the same: they keep our finalizer, and only the operator may remove it,
 * so a terminating namespace would wait on them for ever. There they are released too. A suspended sandbox
 * has no pod to bring this turn, and a restarted operator lists no gone Sandbox: the claim watch brings it
 * (cache/held-claims.ts), and says whether any claim still holds our finalizer.
 */
import type { Logger } from 'pino';
import { EXCLUSIVITY_FINALIZER } from '../../api/names.ts';
import { awaitChange, requeueAfter, type Action } from '../../runtime/action.ts';
import type { PodSummary } from '../cache/pod-summary.ts';
import type { ReconcilerContext } from '../context.ts';
import { removeFinalizerFromIncarnation } from '../finalizer.ts';
import { decidesItself } from '../incarnation.ts';
import { releasePatch } from '../claims.ts';

/**
 * `pods`: the cache's pods of the sandbox name `key` (`<namespace>/<name>`), whose Sandbox the cache does not
 * hold; none when it had none (released, or suspended).
 */
export async function releaseOrphans(
  ctx: ReconcilerContext,
  key: string,
  pods: readonly PodSummary[],
  log: Logger,
): Promise<Action> {
  const namespace = key.slice(0, key.indexOf('/'));
  const sandbox = key.slice(key.indexOf('/') + 1);
  const held = pods.filter((pod) => pod.finalizers.includes(EXCLUSIVITY_FINALIZER));
  if (held.length === 0) {
    // No pod holds anything up. Its claims could, where the namespace terminates: the claim watch says
    // whether any still holds our finalizer (a released sandbox's do not), so this costs nothing otherwise.
    if (ctx.claims?.holds(key) === true && (await ctx.ports.namespaces.isTerminating(namespace)))
      await releaseOrphanClaims(ctx, namespace, sandbox, log);
    return awaitChange();
  }
  // The cache may only lag: a Sandbox the API server still holds (any incarnation) is its own turn's.
  if (decidesItself(await ctx.ports.sandboxes.readLive(namespace, sandbox))) return awaitChange();
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
  await releaseOrphanClaims(ctx, namespace, sandbox, log);
  return awaitChange();
}

/**
 * In a terminating namespace, the workspace claims of a Sandbox that is gone: each deleted (its uid) and freed
 * of our finalizer (its uid and finalizer list), as the namespace's deletion would delete them anyway.
 */
async function releaseOrphanClaims(
  ctx: ReconcilerContext,
  namespace: string,
  sandbox: string,
  log: Logger,
): Promise<void> {
  const claims = (await ctx.ports.claims.listLive(namespace, sandbox)).filter((claim) =>
    claim.finalizers.includes(EXCLUSIVITY_FINALIZER),
  );
  if (claims.length === 0) return;
  // A Sandbox the API server still holds (any incarnation) decides for its claims itself.
  if (decidesItself(await ctx.ports.sandboxes.readLive(namespace, sandbox))) return;
  for (const claim of claims) {
    if (!claim.deleting) await ctx.ports.claims.delete(namespace, claim.name, claim.uid);
    const patch = releasePatch(claim);
    if (patch) await ctx.ports.claims.patchMetadata(namespace, claim.name, patch);
  }
  log.info(
    { claims: claims.map((claim) => claim.name) },
    'the namespace is being deleted and the Sandbox of these workspace claims is gone; released them',
  );
}
