/**
 * The notice a drain leaves on a sandbox's SessionReferences (issue 27: "the SessionReferences' status so agent
 * hosts can tell their sessions"), pure. While a Reschedule is under way (Holding or Moving) every Attached
 * reference carries `status.disruption` — the drained nodes, since when, and the latest the pods move; a
 * tombstone's session is gone and carries none. The notice stays through the pause that keeps a moved pod's
 * name free, and goes once the replacement is created (or the drain is called off, or the sandbox suspended).
 */
import { noticeKey, type DisruptionNotice, type ReferenceState } from '../api/session-reference.ts';
import { rfc3339 } from './conditions.ts';
import type { DrainPlan } from './disruption.ts';

/** What the sandbox's references should say: this notice, nothing, or whatever they say now (a pause). */
export type WantedNotice =
  | { readonly kind: 'Notice'; readonly notice: DisruptionNotice }
  | { readonly kind: 'None' }
  | { readonly kind: 'Unchanged' };

export type NoticeInput = {
  readonly plan: DrainPlan;
  readonly holdSeconds: number;
  readonly suspended: boolean;
  /** A moved pod's name is being kept free: its replacement is not created yet. */
  readonly replacementWaiting: boolean;
};

export function wantedNotice(input: NoticeInput): WantedNotice {
  const { plan } = input;
  if (input.suspended) return { kind: 'None' };
  if (plan.kind === 'Holding' || plan.kind === 'Moving') {
    const nodes = [...new Set(plan.drains.map((drain) => drain.node))].sort();
    const movesBy = new Date(plan.since.getTime() + input.holdSeconds * 1000);
    return { kind: 'Notice', notice: { nodes, since: rfc3339(plan.since), movesBy: rfc3339(movesBy) } };
  }
  return input.replacementWaiting ? { kind: 'Unchanged' } : { kind: 'None' };
}

/**
 * The write one reference needs: the notice to set, null to remove it, undefined for none. Only Attached
 * references carry a notice; a tombstone's is removed.
 */
export function noticeWrite(
  wanted: WantedNotice,
  state: ReferenceState,
  current: string | undefined,
): DisruptionNotice | null | undefined {
  if (wanted.kind === 'Notice') {
    const target = state === 'Attached' ? wanted.notice : undefined;
    if (noticeKey(target) === current) return undefined;
    return target ?? null;
  }
  if (wanted.kind === 'None') return current === undefined ? undefined : null;
  return undefined;
}
