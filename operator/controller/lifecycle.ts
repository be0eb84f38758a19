/**
 * Pure lifecycle rules of a Sandbox outside its deletion: the marker it is born with, the pods it lacks, the
 * automatic cleanup clock, and the administrator's erase request.
 */
import { ANNOTATIONS } from '../api/names.ts';
import type { SandboxState } from '../api/objects.ts';
import type { SandboxStatus } from '../api/sandbox.ts';
import type { CapacityLatch, ReferenceIndex } from '../exclusivity/reference-index.ts';
import type { PodSummary } from './cache/pod-summary.ts';
import { rfc3339 } from './conditions.ts';
import { waitsInPool } from './pool-exemption.ts';

export type ReconciliationStatus = NonNullable<SandboxStatus['reconciliation']>;

/** A sandbox the operator created is born with the marker; an adopted one earns it by a legacy walk. */
export function initialReconciliation(
  sandbox: SandboxState,
  ledgerConfigured: boolean,
): ReconciliationStatus {
  const adoptedFrom = sandbox.metadata.annotations?.[ANNOTATIONS.adoptedFrom];
  if (adoptedFrom === undefined) return { state: 'NotRequired', marker: true };
  if (!ledgerConfigured) {
    return {
      state: 'NotConfigured',
      marker: false,
      message: `adopted from ${adoptedFrom}; no session ledger is configured (--ledger-url), so the sandbox fails closed`,
    };
  }
  return {
    state: 'Pending',
    marker: false,
    message: `adopted from ${adoptedFrom}; awaiting legacy reconciliation`,
  };
}

/** Ordinals 0..replicas-1 with no pod. Pods being deleted count as present: they are never replaced. */
export function missingOrdinals(sandbox: SandboxState, pods: readonly PodSummary[]): number[] {
  const present = new Set(pods.map((pod) => pod.ordinal));
  return Array.from({ length: sandbox.spec.replicas }, (_, i) => i).filter((i) => !present.has(i));
}

/** The persisted overflow, unless an erase was requested and not yet acted on. */
export function capacityLatch(status: SandboxStatus | undefined): CapacityLatch | undefined {
  const capacity = status?.capacity;
  if (!capacity?.overflowed || !capacity.limit) return undefined;
  return { limit: capacity.limit, observed: capacity.observed ?? 0, max: capacity.max ?? 0 };
}

/** The erase-references request not yet acted on: each annotation value erases once. */
/**
 * The erase request not yet acted on: an erase-references value this incarnation's status has not recorded
 * (each value erases once). A value the incarnation carried before the operator ever wrote its status is
 * inherited (a GitOps tool keeps the annotation on every Sandbox it re-creates; a restore brings it back
 * without the status), not a request: `inheritedErase` records it, and it erases nothing (issue 25, #10).
 */
export function pendingErase(sandbox: SandboxState): string | undefined {
  return pendingEraseOf({
    request: sandbox.metadata.annotations?.[ANNOTATIONS.eraseReferences],
    erasedFor: sandbox.status?.capacity?.erasedFor,
    statusWritten: statusWritten(sandbox),
  });
}

/** `pendingErase` on its facts, as a live read gives them (the reference review's). */
export function pendingEraseOf(facts: {
  readonly request: string | undefined;
  readonly erasedFor: string | undefined;
  readonly statusWritten: boolean;
}): string | undefined {
  const { request, erasedFor } = facts;
  return request === undefined || !facts.statusWritten || request === erasedFor ? undefined : request;
}

/** The erase value a first status write records as done, unacted: see `pendingErase`. */
export const inheritedErase = (sandbox: SandboxState): string | undefined =>
  statusWritten(sandbox) ? undefined : sandbox.metadata.annotations?.[ANNOTATIONS.eraseReferences];

/**
 * Whether the operator has written this incarnation's status. Not "has a status": until the first write the
 * API server returns the CRD's default (`UNOBSERVED_STATUS`, observedGeneration 0). Every status the operator
 * writes records `reconciliation`, which the guard-protection policy also reads as "the status was written".
 */
export const statusWritten = (sandbox: SandboxState): boolean => sandbox.status?.reconciliation !== undefined;

export type CleanupClock =
  | { readonly kind: 'Off' }
  | { readonly kind: 'Referenced' }
  | { readonly kind: 'Waiting'; readonly since: string; readonly remainingMs: number }
  | { readonly kind: 'Due'; readonly since: string };

/** When the TTL of DeleteWhenUnreferenced runs out; the clock restarts whenever a reference appears. */
export function cleanupClock(sandbox: SandboxState, index: ReferenceIndex, now: Date): CleanupClock {
  if (index.entries.length > 0 || index.overflowed) return { kind: 'Referenced' };
  if (waitsInPool(sandbox.metadata)) return { kind: 'Off' };
  const since = sandbox.status?.unreferencedSince ?? rfc3339(now);
  if (sandbox.spec.cleanup.policy !== 'DeleteWhenUnreferenced') return { kind: 'Off' };
  const remainingMs =
    Date.parse(since) + sandbox.spec.cleanup.ttlSecondsAfterUnreferenced * 1000 - now.getTime();
  return remainingMs <= 0 ? { kind: 'Due', since } : { kind: 'Waiting', since, remainingMs };
}

/** `status.unreferencedSince` as it should be now: set while unreferenced, cleared when referenced. */
export function unreferencedSince(
  sandbox: SandboxState,
  index: ReferenceIndex,
  now: Date,
): string | undefined {
  if (index.entries.length > 0 || index.overflowed || waitsInPool(sandbox.metadata)) return undefined;
  return sandbox.status?.unreferencedSince ?? rfc3339(now);
}
