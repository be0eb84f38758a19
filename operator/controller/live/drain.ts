/**
 * A live sandbox's pods on nodes being drained (issue 27): the plan the turn writes into the status
 * (disruption.ts), and the move itself — a preconditioned delete by the operator, after which the pod is
 * released and its replacement created like any missing pod, off the cordoned node.
 */
import type { Logger } from 'pino';
import type { Sandbox, SandboxState } from '../../api/objects.ts';
import { keyOf } from '../cache/store.ts';
import type { PodSummary } from '../cache/pod-summary.ts';
import type { ReconcilerContext } from '../context.ts';
import {
  DEFAULT_HOLD_SECONDS,
  disruptionPolicyOf,
  drainPlan,
  movedMessage,
  type DrainPlan,
} from '../disruption.ts';
import { sandboxRef } from '../erase.ts';
import { podDrains } from '../write-status.ts';

export type PlannedDrain = { readonly plan: DrainPlan; readonly holdSeconds: number };

/** When the Disrupting condition turned True: the drain's first sight, which the hold counts from. */
function disruptingSince(sandbox: SandboxState): Date | undefined {
  const condition = sandbox.status?.conditions?.find((c) => c.type === 'Disrupting');
  return condition?.status === 'True' ? new Date(condition.lastTransitionTime) : undefined;
}

/**
 * The plan, from the cache alone unless a pod is to move now: then the template is read live, and a template
 * that pins `nodeName` to a drained node turns the move into Block — its replacement would come back to that
 * very node, and be moved again, for ever.
 */
export async function planDrain(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  pods: readonly PodSummary[],
  readTemplate: () => Promise<Sandbox | undefined>,
): Promise<PlannedDrain> {
  const holdSeconds = sandbox.spec.disruption?.holdSeconds ?? DEFAULT_HOLD_SECONDS;
  const { namespace, name } = sandbox.metadata;
  const plan = drainPlan({
    policy: disruptionPolicyOf(sandbox.spec),
    holdSeconds,
    drains: podDrains(ctx, pods),
    since: disruptingSince(sandbox),
    runningTurns: ctx.store.runningTurns(keyOf(namespace, name)),
    now: ctx.now(),
  });
  if (plan.kind !== 'Moving') return { plan, holdSeconds };
  const whole = await readTemplate();
  if (whole === undefined) {
    // Another incarnation, being deleted or gone: nothing moves now; that change's event brings the next turn.
    const until = new Date(Math.max(plan.since.getTime() + holdSeconds * 1000, ctx.now().getTime() + 1000));
    return {
      plan: { kind: 'Holding', drains: plan.drains, since: plan.since, until, runningTurns: 0 },
      holdSeconds,
    };
  }
  const pinned = whole.spec.podTemplate.spec['nodeName'];
  if (typeof pinned === 'string' && plan.drains.some((drain) => drain.node === pinned))
    return { plan: { kind: 'Blocked', drains: plan.drains, pinnedTo: pinned }, holdSeconds };
  return { plan, holdSeconds };
}

/** Deletes each pod the plan moves, on the uid the cache saw: a pod re-created meanwhile is not touched. */
export async function movePods(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  plan: DrainPlan,
  log: Logger,
): Promise<void> {
  if (plan.kind !== 'Moving') return;
  for (const drain of plan.drains) {
    await ctx.ports.pods.delete(sandbox.metadata.namespace, drain.pod, drain.uid);
    log.info(
      { pod: drain.pod, node: drain.node, cause: drain.cause, because: plan.because },
      'moved a pod off a node being drained: deleted it; its replacement is created on another node',
    );
    ctx.ports.events.record(
      sandboxRef(sandbox),
      'Normal',
      'PodRescheduled',
      movedMessage(drain, plan.because),
    );
  }
}
