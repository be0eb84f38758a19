/**
 * The operator's legacy marker, judged again at admission (docs/adr/0011). With the marker the reference index
 * alone decides exclusivity (exclusivity/exclusivity.ts); an adopted sandbox — older than the index — earns it
 * only by a legacy walk that completed (walk-lane/evidence.ts). The status subresource is the operator's to
 * write, so the marker is what a leaked operator token would forge on an adopted sandbox that a legacy session
 * of another worktree still uses, to have the operator destroy it once deleted. This reviewer walks the session
 * ledger again, as the operator's walk does, and admits the marker only when that walk completes. Its
 * registration (api/operator-review.ts) sends it only a status UPDATE of the operator's users that turns the
 * marker true on a sandbox that was adopted.
 *
 * A sandbox born with the marker (its first status, no adopted-from annotation) passes without a walk; with no
 * ledger configured an adopted one never earns it. A refusal is a 409: to the operator a stale write, which it
 * retries from fresh state. A walk that throws refuses too (503).
 */
import type { Logger } from 'pino';
import { ANNOTATIONS } from '../api/names.ts';
import { parseSandbox } from '../api/parse.ts';
import { earnsMarker, type ReconciliationOutcome } from '../api/reconciliation-outcome.ts';
import {
  unreadable,
  type AdmissionAnswer,
  type AdmissionRequest,
  type Reviewer,
} from '../runtime/admission-review.ts';
import type { LegacyWalk } from './ports.ts';
import { misrouted, sandboxStatusUpdate } from './review-routing.ts';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const field = (value: unknown, key: string): unknown => (isRecord(value) ? value[key] : undefined);

/**
 * Pure: whether the write is the first status of a sandbox born with the marker — no reconciliation recorded
 * before, no adopted-from annotation now (lifecycle.ts `initialReconciliation`). Once a status recorded the
 * sandbox as adopted it stays adopted, whatever its annotations say later.
 */
export function bornWithMarker(request: Pick<AdmissionRequest, 'object' | 'oldObject'>): boolean {
  const recorded = field(field(request.oldObject, 'status'), 'reconciliation') !== undefined;
  const annotations = field(field(request.object, 'metadata'), 'annotations');
  return !recorded && field(annotations, ANNOTATIONS.adoptedFrom) === undefined;
}

/** Whether the marker was already set before this write: then nothing is turned. */
const markedBefore = (request: Pick<AdmissionRequest, 'oldObject'>): boolean =>
  field(field(field(request.oldObject, 'status'), 'reconciliation'), 'marker') === true;

const conflict = (message: string): AdmissionAnswer => ({
  allowed: false,
  code: 409,
  reason: 'Conflict',
  message,
});

/** Pure: the verdict on marking adopted sandbox `sandbox` (namespace/name), given the walk at admission. */
export function judgeMarker(sandbox: string, outcome: ReconciliationOutcome): AdmissionAnswer {
  if (earnsMarker(outcome)) return { allowed: true };
  return conflict(
    `sandbox ${sandbox} is adopted and the legacy walk at admission found ${outcome.kind}: ${outcome.reason}; ` +
      'the operator records the marker only after a complete walk',
  );
}

/**
 * Walks at admission at once, as many as the lane's (walk-lane/lane.ts): each is up to 8 ledger calls for up to
 * 20 s, and the requests are the operator's users' — a leaked token's too, which must not turn the review into
 * a way to flood the ledger. One more is refused as busy (503), and the operator retries it.
 */
export const ADMISSION_WALKS = 2;

/** `walk`: the walk at admission (undefined: no session ledger is configured). */
export function legacyMarkerReviewer(walk: LegacyWalk | undefined, log: Logger): Reviewer {
  let walking = 0;
  return async (request) => {
    const where = sandboxStatusUpdate(request);
    if (where === undefined) return misrouted('marker review', 'a status UPDATE of one Sandbox', request);
    const key = `${where.namespace}/${where.name}`;
    if (markedBefore(request) || bornWithMarker(request)) return { allowed: true };
    const parsed = parseSandbox(request.object);
    // A Sandbox that does not parse names no provider or worktree to walk for.
    if (!parsed.ok) return conflict(`${parsed.error.message}: the operator marks only a Sandbox it can read`);
    if (walk === undefined)
      return conflict(
        `sandbox ${key} is adopted and no session ledger is configured (--ledger-url): ` +
          'the operator never records its marker',
      );
    if (walking >= ADMISSION_WALKS)
      return {
        allowed: false,
        code: 503,
        reason: 'ServiceUnavailable',
        message: `the marker review is walking the session ledger for ${walking} sandboxes already; try again`,
      };
    let outcome;
    walking += 1;
    try {
      outcome = await walk.run(parsed.value, log);
    } catch (error) {
      log.warn({ err: error, sandbox: key }, 'marker review: the legacy walk failed; refusing');
      return unreadable(`the session ledger's owners of sandbox ${key}`, error);
    } finally {
      walking -= 1;
    }
    const verdict = judgeMarker(key, outcome);
    log.info(
      { sandbox: key, user: request.userInfo.username, outcome: outcome.kind, stats: outcome.stats },
      verdict.allowed
        ? 'marker review: the legacy walk at admission completed, the marker admitted'
        : 'marker review: the legacy walk at admission did not complete, the marker refused',
    );
    return verdict;
  };
}
