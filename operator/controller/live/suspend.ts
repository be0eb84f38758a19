/**
 * A suspended sandbox's pods (issue 27): the operator deletes them itself, each preconditioned on the uid and
 * the resourceVersion it read, and creates none until the sandbox runs again. The finalizer of a pod so deleted
 * is released by the live turn as for any terminating pod of a live sandbox; the Sandbox, its references, its
 * finalizer and its eviction guard stay (docs/operations.md, "Suspend and resume").
 */
import type { Logger } from 'pino';
import type { SandboxState } from '../../api/objects.ts';
import type { PodSummary } from '../cache/pod-summary.ts';
import type { ReconcilerContext } from '../context.ts';
import type { Suspension } from '../suspension.ts';

export async function stopPods(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  suspension: Extract<Suspension, { kind: 'Suspended' }>,
  pods: readonly PodSummary[],
  log: Logger,
): Promise<void> {
  const running = pods.filter((pod) => !pod.deleting);
  if (running.length === 0) return;
  const { namespace, name } = sandbox.metadata;
  // Idleness was judged on the cache: an attach it has yet to see must not lose its sandbox's pods. One
  // consistent LIST per suspension (not per session); a reference Attached since keeps them, and its event
  // brings the turn that resumes.
  if (suspension.reason === 'Idle') {
    const live = await ctx.ports.references.listLive(namespace, name);
    const attached = live.filter((parsed) => !parsed.ok || parsed.value.spec.state === 'Attached');
    if (attached.length > 0) {
      log.info(
        { attached: attached.length },
        'idle by the cache, but the API server has an attached reference; pods kept',
      );
      return;
    }
  }
  for (const pod of running) {
    await ctx.ports.pods.delete(namespace, pod.name, pod.uid, pod.resourceVersion);
    log.info({ pod: pod.name, reason: suspension.reason }, 'sandbox suspended; deleted its pod');
  }
}
