/**
 * The Sandbox status as a pure function of what the controller observed and decided. Writing it is the
 * reconciler's job; this file only says what it should be.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Condition } from '../api/fields.ts';
import { MESSAGE_MAX } from '../api/limits.ts';
import type { Sandbox } from '../api/objects.ts';
import type { SandboxDecision, SandboxPhase, SandboxStatus } from '../api/sandbox.ts';
import type { Verdict } from '../index/exclusivity.ts';
import { foreignReferences } from '../index/foreign.ts';
import type { ReferenceIndex } from '../index/reference-index.ts';
import { rfc3339, setCondition } from './conditions.ts';
import type { ReconciliationStatus } from './lifecycle.ts';
import type { PodSummary } from './pod-summary.ts';

export type StatusInput = {
  readonly sandbox: Sandbox;
  readonly index: ReferenceIndex;
  readonly pods: readonly PodSummary[];
  readonly reconciliation: ReconciliationStatus;
  /** The decision to record; the previous one is kept when undefined. */
  readonly decision: SandboxDecision | undefined;
  readonly unreferencedSince: string | undefined;
  readonly erasedFor: string | undefined;
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
  const phase: SandboxPhase = deleting
    ? blocked
      ? 'Blocked'
      : 'Terminating'
    : ready >= sandbox.spec.replicas
      ? 'Running'
      : 'Pending';

  let conditions: Condition[] = sandbox.status?.conditions ?? [];
  const set = (update: Parameters<typeof setCondition>[1]) =>
    (conditions = setCondition(conditions, update, now, generation));
  set(
    deleting
      ? { type: 'Ready', status: 'False', reason: 'Terminating', message: 'the sandbox is being deleted' }
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
    conditions,
  };
}

/**
 * The JSON merge patch (RFC 7386) turning `before` into `after`: nested objects are diffed, a removed field
 * becomes null, lists are replaced whole. Key order is ignored (the API server reorders keys).
 */
export function statusMergePatch(
  before: SandboxStatus | undefined,
  after: SandboxStatus,
): Record<string, unknown> | undefined {
  const patch = mergeDiff(before, after);
  return patch === undefined ? undefined : (patch as Record<string, unknown>);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function mergeDiff(before: unknown, after: unknown): unknown {
  if (!isPlainObject(before) || !isPlainObject(after))
    return isDeepStrictEqual(before, after) ? undefined : after;
  const patch: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (!(key in after) || after[key] === undefined) {
      if (before[key] !== undefined) patch[key] = null;
      continue;
    }
    const change = mergeDiff(before[key], after[key]);
    if (change !== undefined) patch[key] = change;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}
