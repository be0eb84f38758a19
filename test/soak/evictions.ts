/**
 * An eviction the soak allows whoever asks: of a pod that had not started. The eviction API deletes a pod in
 * phase Pending without asking its budget (Kubernetes' `canIgnorePDB`: not yet scheduled, pulling its image,
 * waiting for its workspace claim to bind — as the soak's workspace sandboxes on kwok always are). Nothing of
 * any session has run in such a pod, and the operator replaces it (docs/operations.md, Node drains). Pure.
 *
 * Certain from the audit log alone, phase being monotonic (Pending never comes back once left): the pod's
 * latest create before the eviction answered Pending, and every write of it the API server received before
 * the eviction completed answered Pending too. A write whose answer the log does not hold, or that answered
 * another phase, may have started the pod first: then the eviction is judged as any stop.
 */
import type { TimedEvent } from './audit-log.ts';

type PodAnswer = { metadata?: { name?: unknown }; status?: { phase?: unknown } };

const ok = (e: TimedEvent) => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;
const podWrite = (e: TimedEvent, name: string) =>
  e.objectRef?.resource === 'pods' &&
  e.objectRef.name === name &&
  (e.objectRef.subresource === undefined || e.objectRef.subresource === 'status');
const phaseOf = (e: TimedEvent) => (e.responseObject as PodAnswer | undefined)?.status?.phase;

/** Whether `eviction` (a successful create of pods/eviction) certainly met its pod before it started. */
export function evictedBeforeStart(eviction: TimedEvent, events: readonly TimedEvent[]): boolean {
  const name = eviction.objectRef?.name ?? '';
  const before = events.filter((e) => e !== eviction && e.received < eviction.completed && podWrite(e, name));
  const created = before.findLast((e) => e.verb === 'create' && e.responseStatus?.code === 201);
  if (created === undefined || phaseOf(created) !== 'Pending') return false;
  return before
    .filter((e) => e.received > created.received && (e.verb === 'patch' || e.verb === 'update') && ok(e))
    .every((e) => phaseOf(e) === 'Pending');
}
