/** Computes the Sandbox status from the cache and what was decided, and writes only what changed. */
import type { SandboxState } from '../api/objects.ts';
import type { SandboxDecision } from '../api/sandbox.ts';
import type { ReferenceIndex } from '../exclusivity/reference-index.ts';
import type { ReconcilerContext } from './context.ts';
import { incarnationOf } from './incarnation.ts';
import type { ReconciliationStatus } from './lifecycle.ts';
import { statusWritten, unreferencedSince } from './lifecycle.ts';
import type { PodSummary } from './cache/pod-summary.ts';
import { changedStatusFields, sandboxStatus } from './status.ts';
import { drainPlan, type DrainPlan, type PodDrain } from './disruption.ts';
import type { SandboxStatus } from '../api/sandbox.ts';
import { sandboxRef } from './erase.ts';
import { keyOf } from './cache/store.ts';
import type { Suspension } from './suspension.ts';
import type { EventType } from './ports.ts';

export type StatusFacts = {
  readonly index: ReferenceIndex;
  readonly reconciliation: ReconciliationStatus;
  readonly decision: SandboxDecision | undefined;
  readonly pods: readonly PodSummary[];
  /** The erase request just acted on, when this reconcile erased the index. */
  readonly erasedFor?: string | undefined;
  /** Top-level fields whose change alone is not worth a request; they are written with any other change. */
  readonly notAlone?: readonly string[];
  /**
   * Lands only on the Sandbox as read (its resourceVersion): a decision made on a cache that lags must not
   * overwrite one recorded meanwhile — an Exclusive decision is final (deletion/record.ts).
   */
  readonly asRead?: true;
  /** The live turn's judgement (suspension.ts); a deletion leaves the Suspended condition as it was. */
  readonly suspension?: Suspension | undefined;
  /**
   * What its pods' drains do to it, as the live turn planned it (disruption.ts). Absent (a sandbox being
   * deleted, whose pods never move): the drains, under the policy Block.
   */
  readonly drain?: { readonly plan: DrainPlan; readonly holdSeconds: number };
};

export async function writeStatus(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  facts: StatusFacts,
): Promise<void> {
  const now = ctx.now();
  const misconfiguration = ctx.misconfigurations.of(keyOf(sandbox.metadata.namespace, sandbox.metadata.name));
  const status = sandboxStatus({
    sandbox,
    ...facts,
    unreferencedSince: unreferencedSince(sandbox, facts.index, now),
    erasedFor: facts.erasedFor ?? sandbox.status?.capacity?.erasedFor,
    misconfiguration,
    drain: facts.drain ?? {
      plan: drainPlan({
        policy: 'Block',
        holdSeconds: 0,
        drains: podDrains(ctx, facts.pods),
        since: undefined,
        runningTurns: 0,
        now,
      }),
      holdSeconds: 0,
    },
    now,
  });
  const changed = changedStatusFields(sandbox.status, status);
  if (!changed) return;
  if (facts.notAlone && Object.keys(changed).every((field) => facts.notAlone?.includes(field))) return;
  // The Events follow their conditions: once when one first turns True (or its message changes), not per turn.
  // "First" is judged on the Sandbox as read, so that write must land on that very version: a second turn on
  // a cache that has yet to see the first write would otherwise record it, and say it, again.
  const announced = [
    ...ANNOUNCED.map((type) => turnedTrue(sandbox.status, status, type)),
    suspensionTurned(sandbox.status, status),
  ].filter((condition) => condition !== undefined);
  // So does a first status: it records an erase request the Sandbox carries as inherited (lifecycle.ts), and on
  // a cache that lags an administrator's annotation it would record the wrong one (the operator bounds refuse
  // that as a token's write); a stale write instead conflicts, and the next turn reads the annotation.
  const readVersion =
    facts.asRead || announced.length > 0 || !statusWritten(sandbox)
      ? (sandbox.metadata.resourceVersion ?? '')
      : undefined;
  await ctx.ports.sandboxes.patchStatus(incarnationOf(sandbox), sandbox.status, changed, readVersion);
  for (const is of announced)
    ctx.ports.events.record(sandboxRef(sandbox), is.type, is.event ?? is.reason, is.message);
}

/** Conditions whose turning True a person should hear of; DisruptionBlocked's Event is named for the act. */
const ANNOUNCED = ['Misconfigured', 'DisruptionBlocked', 'Disrupting'] as const;
const EVENT_REASONS: Readonly<Record<string, string>> = {
  DisruptionBlocked: 'DrainBlocked',
  Disrupting: 'DrainRescheduling',
};
/** A Reschedule under way is news, not a fault; the others want a person. */
const EVENT_TYPES: Readonly<Record<string, EventType>> = { Disrupting: 'Normal' };

function turnedTrue(before: SandboxStatus | undefined, after: SandboxStatus, type: string) {
  const was = before?.conditions?.find((c) => c.type === type);
  const is = after.conditions?.find((c) => c.type === type);
  if (is?.status !== 'True' || (was?.status === 'True' && was.message === is.message)) return undefined;
  const eventType: EventType = EVENT_TYPES[type] ?? 'Warning';
  return { type: eventType, reason: is.reason, message: is.message, event: EVENT_REASONS[type] };
}

/** A suspend or a resume, said once as it happens: `Suspended` when the condition turns True, `Resumed` when it turns False. */
function suspensionTurned(before: SandboxStatus | undefined, after: SandboxStatus) {
  const was = before?.conditions?.find((c) => c.type === 'Suspended')?.status === 'True';
  const is = after.conditions?.find((c) => c.type === 'Suspended');
  if (is === undefined || was === (is.status === 'True')) return undefined;
  const type: EventType = 'Normal';
  return is.status === 'True'
    ? { type, reason: is.reason, event: 'Suspended', message: is.message }
    : { type, reason: is.reason, event: 'Resumed', message: 'running again: its pods are created again' };
}

/** Its pods on nodes being drained, as the node watch sees them; a pod already going is not one. */
export function podDrains(ctx: ReconcilerContext, pods: readonly PodSummary[]): PodDrain[] {
  const drains: PodDrain[] = [];
  for (const pod of pods) {
    const drain = pod.node === undefined || pod.deleting ? undefined : ctx.nodes?.drainOf(pod.node);
    if (drain) drains.push({ ...drain, pod: pod.name, uid: pod.uid });
  }
  return drains;
}
