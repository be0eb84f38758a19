/**
 * A suspended sandbox's pods (issue 27): the operator deletes them itself, each preconditioned on the uid and
 * the resourceVersion it read, and creates none until the sandbox runs again. The finalizer of a pod so deleted
 * is released by the live turn as for any terminating pod of a live sandbox; the Sandbox, its references, its
 * finalizer and its eviction guard stay (docs/operations.md, "Suspend and resume").
 */
import type { Logger } from 'pino';
import { KubeRequestError } from '../../kube/errors.ts';
import type { SandboxState } from '../../api/objects.ts';
import type { PodSummary } from '../cache/pod-summary.ts';
import type { ReconcilerContext } from '../context.ts';
import { referenceEntryOf } from '../../exclusivity/reference.ts';
import { keepsAwake, type Suspension } from '../suspension.ts';

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
    const idle = sandbox.spec.idle ?? {};
    const live = await ctx.ports.references.listLive(namespace, name);
    const attached = live.filter((parsed) => !parsed.ok || keepsAwake(referenceEntryOf(parsed.value), idle));
    if (attached.length > 0) {
      log.info(
        { attached: attached.length },
        'idle by the cache, but the API server has an attached reference; pods kept',
      );
      return;
    }
  }
  for (const pod of running) {
    try {
      await ctx.ports.pods.delete(namespace, pod.name, pod.uid, pod.resourceVersion);
    } catch (error) {
      // Changed since the cache read it (its kubelet wrote its status): that change's event brings the turn
      // that judges it again, on the version it carries. Not a failure to back off from.
      if (!(error instanceof KubeRequestError && error.status === 409)) throw error;
      log.info({ pod: pod.name }, 'sandbox suspended; its pod changed since read, judged again next turn');
      continue;
    }
    log.info({ pod: pod.name, reason: suspension.reason }, 'sandbox suspended; deleted its pod');
  }
}
