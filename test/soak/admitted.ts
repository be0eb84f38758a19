/**
 * Invariant 15, operator-admitted (issue 26 #1): the operator bounds refuse a pod its own identity creates
 * unless it is the pod the operator builds — its template's checks at the namespace's level, and the shell
 * reaper held to its shape (operator/api/reaper-bounds.ts). The operator never sends a pod they refuse, on
 * any path (create, a second replica, resume, reschedule): a refusal would leave the sandbox without its
 * pods, which no other invariant sees. Judged from the audit log: every create of a pod by the operator's
 * user that an admission policy answered 403.
 */
import type { TimedEvent } from './audit-log.ts';

/** A Violation of invariants.ts (which calls this judge, so it is not imported from there). */
export type RefusedPod = {
  readonly invariant: 'operator-admitted';
  readonly signature: string;
  readonly message: string;
};

export function refusedOperatorPods(
  sorted: readonly TimedEvent[],
  operatorUser: string,
  evidence: (event: TimedEvent) => string,
): RefusedPod[] {
  return sorted
    .filter(
      (e) =>
        e.user.username === operatorUser &&
        e.verb === 'create' &&
        e.objectRef?.resource === 'pods' &&
        e.objectRef.subresource === undefined &&
        e.responseStatus?.code === 403 &&
        (e.responseStatus.message ?? '').includes('ValidatingAdmissionPolicy'),
    )
    .map((e) => ({
      invariant: 'operator-admitted' as const,
      signature: 'operator-admitted/operator/refused',
      message: `admission refused the operator's own pod ${e.objectRef?.name ?? '?'}: ${e.responseStatus?.message ?? ''}; ${evidence(e)}`,
    }));
}
