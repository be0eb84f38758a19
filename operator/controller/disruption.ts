/**
 * What a node drain does to a live sandbox (issue 27, "Drains that finish"), pure. The eviction guard refuses
 * every eviction of a sandbox pod either way: the operator alone moves a pod, and only under the policy
 * Reschedule — once no attached session has a turn Running, or once `holdSeconds` have passed since the drain
 * was first seen — by deleting it; its replacement is created as any missing pod is, and the scheduler places
 * it off the cordoned node. Under Block (the default for a sandbox whose workspace lives in its pod) the drain
 * waits, and says so.
 */
import type { DisruptionPolicy } from '../api/blueprint.ts';
import type { SandboxSpec } from '../api/sandbox.ts';
import { claimTemplatesOf } from '../api/volume-claims.ts';
import type { NodeDrain } from './cache/node-drains.ts';
import { rfc3339 } from './conditions.ts';

/** A pod of the sandbox on a node being drained. */
export type PodDrain = NodeDrain & { readonly pod: string; readonly uid: string };

export const DEFAULT_HOLD_SECONDS = 300;

/**
 * How long a moved pod's name stays free before its replacement is created. Drainers evict by name and, on a
 * refusal, retry that name: kubectl drain every 5 s (reading the pod again by name, so it would follow a
 * replacement onto its new node and be refused for ever), cluster-autoscaler every 10 s. Once they find the
 * name gone, their drain is done.
 */
export const NAME_FREE_MS = 15_000;

/** The Disrupting condition's reason once a drain of the sandbox's pods has ended (moved, or called off). */
export const DRAIN_ENDED = 'DrainEnded';

type ConditionSeen = {
  readonly status: string;
  readonly reason: string;
  readonly lastTransitionTime: string;
};

/**
 * How long the turn must still wait before creating a missing pod: a drain that has just ended may have moved
 * it, and its name must stay free for NAME_FREE_MS (undefined: create now). A Disrupting condition still True
 * while the plan finds no drain left is that end, seen first (the status that says so is written by this very
 * turn, and a lagging cache may show it True a little longer): the whole wait is ahead.
 */
export function replacementWaitMs(
  disrupting: ConditionSeen | undefined,
  plan: DrainPlan['kind'],
  now: Date,
): number | undefined {
  if (disrupting?.status === 'True') return plan === 'None' ? NAME_FREE_MS : undefined;
  if (disrupting?.status !== 'False' || disrupting.reason !== DRAIN_ENDED) return undefined;
  const left = Date.parse(disrupting.lastTransitionTime) + NAME_FREE_MS - now.getTime();
  return left > 0 ? left : undefined;
}

type DisruptionSpec = Pick<SandboxSpec, 'disruption'> & Partial<Pick<SandboxSpec, 'volumeClaimTemplates'>>;

/**
 * Whether the sandbox's workspace survives its pod: it lives on claims (spec.volumeClaimTemplates) that a
 * replacement pod mounts again. Without them it lives in the pod's own filesystem.
 */
export function hasPersistentWorkspace(spec: DisruptionSpec): boolean {
  return claimTemplatesOf(spec).length > 0;
}

/** The policy the spec asks for, or the default: Reschedule only where the workspace outlives the pod. */
export function disruptionPolicyOf(spec: DisruptionSpec): DisruptionPolicy {
  return spec.disruption?.policy ?? (hasPersistentWorkspace(spec) ? 'Reschedule' : 'Block');
}

export type DrainInput = {
  readonly policy: DisruptionPolicy;
  readonly holdSeconds: number;
  /** The sandbox's pods on nodes being drained, not already being deleted. */
  readonly drains: readonly PodDrain[];
  /** When the drain was first seen (the Disrupting condition's transition); undefined: now. */
  readonly since: Date | undefined;
  /** Attached references whose session has a turn Running. */
  readonly runningTurns: number;
  readonly now: Date;
};

export type DrainPlan =
  | { readonly kind: 'None' }
  | {
      readonly kind: 'Blocked';
      readonly drains: readonly PodDrain[];
      /** Set when the policy is Reschedule but the template pins the pod to the drained node. */
      readonly pinnedTo?: string;
    }
  | {
      readonly kind: 'Holding';
      readonly drains: readonly PodDrain[];
      readonly since: Date;
      readonly until: Date;
      readonly runningTurns: number;
    }
  | {
      readonly kind: 'Moving';
      readonly drains: readonly PodDrain[];
      readonly since: Date;
      readonly because: 'NoTurnRunning' | 'HoldEnded';
    };

export function drainPlan(input: DrainInput): DrainPlan {
  const { drains, now } = input;
  if (drains.length === 0) return { kind: 'None' };
  if (input.policy === 'Block') return { kind: 'Blocked', drains };
  const since = input.since ?? now;
  const until = new Date(since.getTime() + input.holdSeconds * 1000);
  if (input.runningTurns === 0) return { kind: 'Moving', drains, since, because: 'NoTurnRunning' };
  if (now.getTime() >= until.getTime()) return { kind: 'Moving', drains, since, because: 'HoldEnded' };
  return { kind: 'Holding', drains, since, until, runningTurns: input.runningTurns };
}

/** When the turn must look again: a hold ends without any event. */
export function holdRemainingMs(plan: DrainPlan, now: Date): number | undefined {
  return plan.kind === 'Holding' ? Math.max(0, plan.until.getTime() - now.getTime()) : undefined;
}

const nodesOf = (drains: readonly PodDrain[]) =>
  [...new Set(drains.map((d) => `${d.node} (${d.cause})`))].join(', ');
const podsOf = (drains: readonly PodDrain[]) => drains.map((d) => d.pod).join(', ');
const plural = (drains: readonly PodDrain[], one: string, many: string) => (drains.length === 1 ? one : many);

/**
 * The Disrupting condition's message while a Reschedule is under way: the same from the drain's start until the
 * pod moves (its Event is said once), whether turns are still Running or not.
 */
export function disruptingMessage(
  plan: Extract<DrainPlan, { kind: 'Holding' | 'Moving' }>,
  holdSeconds: number,
): string {
  const deadline = new Date(plan.since.getTime() + holdSeconds * 1000);
  return (
    `${plural(plan.drains, 'node', 'nodes')} ${nodesOf(plan.drains)} being drained; ` +
    `${plural(plan.drains, 'pod', 'pods')} ${podsOf(plan.drains)} ` +
    `${plural(plan.drains, 'moves', 'move')} to another node once no attached session has a turn Running, ` +
    `at the latest at ${rfc3339(deadline)} (disruption policy Reschedule)`
  );
}

/** The Event said when the operator deletes a pod to move it. */
export function movedMessage(drain: PodDrain, because: 'NoTurnRunning' | 'HoldEnded'): string {
  return (
    `deleted pod ${drain.pod} on node ${drain.node} (${drain.cause}, being drained) to move it: ` +
    (because === 'NoTurnRunning'
      ? 'no attached session has a turn Running'
      : 'the hold ended with turns still Running') +
    '; its replacement is created on another node'
  );
}
