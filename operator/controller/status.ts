/**
 * The Sandbox status as a pure function of what the controller observed and decided. Writing it is the
 * reconciler's job; this file only says what it should be.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Condition } from '../api/fields.ts';
import { MESSAGE_MAX } from '../api/limits.ts';
import type { SandboxState } from '../api/objects.ts';
import type { SandboxDecision, SandboxPhase, SandboxStatus } from '../api/sandbox.ts';
import type { Verdict } from '../exclusivity/exclusivity.ts';
import { foreignReferences } from '../exclusivity/foreign.ts';
import type { ReferenceIndex } from '../exclusivity/reference-index.ts';
import { rfc3339, setCondition } from './conditions.ts';
import { incarnationTest, type JsonPatchOp } from './finalizer.ts';
import { healthConditions } from './health-conditions.ts';
import type { ReconciliationStatus } from './lifecycle.ts';
import { misconfiguredCondition, type MisconfigurationState } from './misconfiguration.ts';
import type { PodSummary } from './cache/pod-summary.ts';
import { suspendedMessage, type Suspension } from './suspension.ts';
import { DRAIN_ENDED, disruptingMessage, replacementWaitMs, type DrainPlan } from './disruption.ts';

export type StatusInput = {
  readonly sandbox: SandboxState;
  readonly index: ReferenceIndex;
  readonly pods: readonly PodSummary[];
  readonly reconciliation: ReconciliationStatus;
  /** The decision to record; the previous one is kept when undefined. */
  readonly decision: SandboxDecision | undefined;
  readonly unreferencedSince: string | undefined;
  readonly erasedFor: string | undefined;
  /** What this process knows of a refusal only a person can fix (misconfiguration.ts). */
  readonly misconfiguration?: MisconfigurationState;
  /** Whether the live sandbox runs or is suspended (suspension.ts); undefined in a deletion, which keeps both as they were. */
  readonly suspension?: Suspension | undefined;
  /**
   * What the drains of its pods' nodes do to it (disruption.ts); None when the operator cannot watch Nodes.
   * `holdSeconds` dates the Reschedule's deadline in the Disrupting condition.
   */
  readonly drain?: { readonly plan: DrainPlan; readonly holdSeconds: number };
  readonly now: Date;
};

const clip = (text: string) => (text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX - 1)}…` : text);

export function decisionOf(verdict: Verdict, now: Date): SandboxDecision {
  return {
    verdict: verdict.verdict,
    evidence: verdict.evidence,
    ...(verdict.verdict === 'Foreign' && verdict.blockingReferences.length > 0
      ? { blockingReferences: [...verdict.blockingReferences] }
      : {}),
    ...(verdict.verdict === 'Foreign' ? { blockingCount: verdict.blockingCount } : {}),
    reason: clip(verdict.reason),
    decidedAt: rfc3339(now),
  };
}

export function sandboxStatus(input: StatusInput): SandboxStatus {
  const { sandbox, index, pods, now } = input;
  const generation = sandbox.metadata.generation;
  const deleting = sandbox.metadata.deletionTimestamp !== undefined;
  const decision = input.decision ?? sandbox.status?.decision;
  const ready = pods.filter((pod) => pod.ready && !pod.deleting).length;
  const blocked = deleting && decision !== undefined && decision.verdict !== 'Exclusive';
  const suspended = !deleting && input.suspension?.kind === 'Suspended' ? input.suspension : undefined;
  const phase: SandboxPhase = deleting
    ? blocked
      ? 'Blocked'
      : 'Terminating'
    : suspended
      ? 'Suspended'
      : ready >= sandbox.spec.replicas
        ? 'Running'
        : 'Pending';

  let conditions: Condition[] = sandbox.status?.conditions ?? [];
  const set = (update: Parameters<typeof setCondition>[1]) =>
    (conditions = setCondition(conditions, update, now, generation));
  set(
    deleting
      ? { type: 'Ready', status: 'False', reason: 'Terminating', message: 'the sandbox is being deleted' }
      : suspended
        ? {
            type: 'Ready',
            status: 'False',
            // Suspending while pods remain: Reconciling stays True until they are gone (health-conditions.ts).
            reason: pods.length === 0 ? 'Suspended' : 'Suspending',
            message: suspendedMessage(suspended, pods.length),
          }
        : ready >= sandbox.spec.replicas
          ? {
              type: 'Ready',
              status: 'True',
              reason: 'PodsReady',
              message: `${ready}/${sandbox.spec.replicas} pods ready`,
            }
          : {
              type: 'Ready',
              status: 'False',
              reason: 'PodsNotReady',
              message: `${ready}/${sandbox.spec.replicas} pods ready`,
            },
  );
  set(
    blocked
      ? {
          type: 'DeletionBlocked',
          status: 'True',
          reason: decision.verdict,
          message: clip(
            `${decision.reason ?? ''}${decision.blockingReferences?.length ? `; blocking: ${decision.blockingReferences.join(', ')}` : ''}`,
          ),
        }
      : {
          type: 'DeletionBlocked',
          status: 'False',
          reason: deleting ? 'Exclusive' : 'NotDeleting',
          message: '',
        },
  );
  const { reconciliation } = input;
  set(
    reconciliation.marker
      ? {
          type: 'ReferencesReconciled',
          status: 'True',
          reason: reconciliation.state === 'NotRequired' ? 'BornWithMarker' : 'Reconciled',
          message: reconciliation.message ?? 'the reference index alone decides exclusivity',
        }
      : {
          type: 'ReferencesReconciled',
          status: 'False',
          reason: reconciliation.state,
          message: reconciliation.message ?? '',
        },
  );
  set(
    index.overflowed
      ? {
          type: 'CapacityExceeded',
          status: 'True',
          reason: `${index.latch.limit}Exceeded`,
          message: `${index.latch.observed} > ${index.latch.max}; the sandbox fails closed until its references are erased`,
        }
      : { type: 'CapacityExceeded', status: 'False', reason: 'WithinCapacity', message: '' },
  );
  if (input.suspension && !deleting)
    set(
      suspended
        ? {
            type: 'Suspended',
            status: 'True',
            reason: suspended.reason,
            message: suspendedMessage(suspended, pods.length),
          }
        : { type: 'Suspended', status: 'False', reason: 'Running', message: '' },
    );
  const drain = input.drain ?? { plan: { kind: 'None' }, holdSeconds: 0 };
  set(disruptionBlocked(drain.plan));
  set(disrupting(drain.plan, drain.holdSeconds, conditions, now));
  const misconfigured = misconfiguredCondition(input.misconfiguration, conditions);
  if (misconfigured) set(misconfigured);
  for (const update of healthConditions(conditions, deleting)) set(update);

  const target = { worktree: sandbox.spec.worktree };
  return {
    observedGeneration: generation,
    phase,
    ready: `${ready}/${sandbox.spec.replicas}`,
    pods: { total: pods.length, ready },
    references: {
      attached: index.attached,
      detached: index.detached,
      foreign: foreignReferences(index, target).length,
      bytes: index.bytes,
    },
    capacity: {
      overflowed: index.overflowed,
      ...(index.overflowed
        ? {
            limit: index.latch.limit,
            observed: index.latch.observed,
            max: index.latch.max,
            since: sandbox.status?.capacity?.since ?? rfc3339(now),
          }
        : {}),
      ...(input.erasedFor === undefined ? {} : { erasedFor: input.erasedFor }),
    },
    ...(decision ? { decision } : {}),
    reconciliation,
    ...(input.unreferencedSince === undefined ? {} : { unreferencedSince: input.unreferencedSince }),
    ...idleSinceOf(input),
    conditions,
  };
}

/** `status.idleSince`: as the live turn judged it; kept as it was in a deletion. */
function idleSinceOf({ suspension, sandbox }: StatusInput): { idleSince?: string } {
  const idleSince = suspension ? suspension.idleSince : sandbox.status?.idleSince;
  return idleSince === undefined ? {} : { idleSince };
}

/**
 * Whether a node drain waits on this sandbox for good. Under the disruption policy Block (a sandbox whose
 * workspace lives in its pod cannot move) the eviction guard refuses every eviction, so `kubectl drain`, the
 * cluster autoscaler or Karpenter retries until the sandbox is deleted or the drain is called off; this makes
 * that visible (issue 27) instead of a drain stalled on an unexplained 429.
 */
function disruptionBlocked(plan: DrainPlan): Parameters<typeof setCondition>[1] {
  if (plan.kind !== 'Blocked')
    return {
      type: 'DisruptionBlocked',
      status: 'False',
      reason: plan.kind === 'None' ? 'NoDrain' : 'Rescheduling',
      message: '',
    };
  const nodes = [...new Set(plan.drains.map((d) => `${d.node} (${d.cause})`))];
  const pods = plan.drains.map((d) => d.pod);
  return {
    type: 'DisruptionBlocked',
    status: 'True',
    reason: 'NodeDraining',
    message: clip(
      `${nodes.length === 1 ? 'node' : 'nodes'} ${nodes.join(', ')} being drained; the eviction guard ` +
        `refuses to evict ${pods.length === 1 ? 'pod' : 'pods'} ${pods.join(', ')} (` +
        (plan.pinnedTo === undefined
          ? 'disruption policy Block: the workspace lives in the pod'
          : `the template pins nodeName ${plan.pinnedTo}, so a replacement could not move`) +
        `), so the drain waits until the sandbox is deleted or the drain is called off`,
    ),
  };
}

/**
 * Whether the operator is moving the sandbox off a node being drained (the policy Reschedule): True from the
 * drain's first sight until the pod is gone from that node, so agent hosts can tell their sessions.
 */
function disrupting(
  plan: DrainPlan,
  holdSeconds: number,
  before: readonly Condition[],
  now: Date,
): Parameters<typeof setCondition>[1] {
  if (plan.kind === 'None') {
    // A drain that ended (its pod moved, or the drain called off) is remembered while its pod's name is kept
    // free (disruption.ts, NAME_FREE_MS): the turn creates no replacement until then.
    const was = before.find((c) => c.type === 'Disrupting');
    const ended = replacementWaitMs(was, plan.kind, now) !== undefined;
    return ended
      ? {
          type: 'Disrupting',
          status: 'False',
          reason: DRAIN_ENDED,
          message: 'the drain ended; a moved pod is created again once drainers have found its name gone',
        }
      : { type: 'Disrupting', status: 'False', reason: 'NoDrain', message: '' };
  }
  if (plan.kind === 'Blocked')
    return { type: 'Disrupting', status: 'False', reason: 'PolicyBlock', message: '' };
  return {
    type: 'Disrupting',
    status: 'True',
    reason: 'NodeDraining',
    message: clip(disruptingMessage(plan, holdSeconds)),
  };
}

/**
 * The top-level status fields that differ: each with its whole new value, or null when it is dropped.
 * Undefined when nothing changed (deep equality, so key order does not count).
 */
export function changedStatusFields(
  before: SandboxStatus | undefined,
  after: SandboxStatus,
): Record<string, unknown> | undefined {
  const was: Record<string, unknown> = { ...before };
  const now: Record<string, unknown> = { ...after };
  const changed: Record<string, unknown> = {};
  for (const field of new Set([...Object.keys(was), ...Object.keys(now)])) {
    if (now[field] === undefined) {
      if (was[field] !== undefined) changed[field] = null;
    } else if (!isDeepStrictEqual(was[field], now[field])) changed[field] = now[field];
  }
  return Object.keys(changed).length === 0 ? undefined : changed;
}

/**
 * The JSON Patch that sets the changed top-level status fields, testing the uid first: a merge patch cannot
 * carry a precondition, and on the status subresource the API server ignores a uid in the body. A field the
 * change drops is removed; with no status yet, the whole status is added.
 */
export function statusPatchOps(
  uid: string,
  before: Readonly<Record<string, unknown>> | undefined,
  changed: Readonly<Record<string, unknown>>,
  readVersion?: string,
): JsonPatchOp[] {
  const tests: JsonPatchOp[] = [incarnationTest(uid)];
  if (readVersion !== undefined)
    tests.push({ op: 'test', path: '/metadata/resourceVersion', value: readVersion });
  if (before === undefined) return [...tests, { op: 'add', path: '/status', value: changed }];
  return [
    ...tests,
    ...Object.entries(changed).map(([field, value]): JsonPatchOp => {
      const path = `/status/${field.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      return value === null ? { op: 'remove', path } : { op: 'add', path, value };
    }),
  ];
}
