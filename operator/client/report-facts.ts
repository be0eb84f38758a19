/**
 * The pure half of recordTurn and reportOnce (completion-reports.ts does the I/O): what the child's
 * SessionReference, as read, says to the report-once rule (report-rule.ts), and what recordTurn writes.
 *
 * Read from the raw object, field by field, as every client reads it (test/conformance/vectors/report.json
 * and ended-turns.json hold the cases): a turn that cannot be read is `Unreadable`, and the rule fails open
 * on it (reports); fields of the reference that the rule does not use never make it unreadable.
 */
import {
  ENDED_TURNS_MAX,
  TURN_ORIGINS,
  TURN_PHASES,
  type TurnOrigin,
  type TurnPhase,
} from '../api/session-reference.ts';
import { reportedAnnotation } from './names.ts';
import { decideCompletionReport, type CompletionReport } from './report-rule.ts';

export interface ReportRequest {
  readonly namespace: string;
  /** The child's SessionReference. */
  readonly reference: string;
  readonly childSession: string;
  /** The parent's delegation this turn answers. */
  readonly delegationId: string;
  readonly delegation: 'Answered' | 'Unanswered';
  readonly turnId: string;
}

export type ReportOutcome =
  | { readonly kind: 'Reported'; readonly report: Extract<CompletionReport, { report: true }> }
  | { readonly kind: 'AlreadyReported'; readonly key: string }
  | { readonly kind: 'NotReported'; readonly reason: 'HostNoticeTurn' };

export interface TurnRecord {
  readonly id: string;
  readonly phase: TurnPhase;
  readonly origin: TurnOrigin;
  /** Origins of messages steered into the turn, in any number: stored as their distinct set. */
  readonly joinedOrigins: readonly TurnOrigin[];
}

type LatestTurn = { readonly id: string; readonly origin: TurnOrigin; readonly joinedOrigins?: TurnOrigin[] };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isOrigin = (value: unknown): value is TurnOrigin =>
  (TURN_ORIGINS as readonly unknown[]).includes(value);
/** A field as the API server means it: JSON null is not set. */
const field = (record: Record<string, unknown>, name: string): unknown => record[name] ?? undefined;
const child = (value: unknown, name: string): unknown => (isRecord(value) ? field(value, name) : undefined);

/** The reference's status.turn, or undefined when there is none or it cannot be read. */
export function readLatestTurn(stored: unknown): LatestTurn | undefined {
  const turn = child(child(stored, 'status'), 'turn');
  if (!isRecord(turn)) return undefined;
  const id = field(turn, 'id');
  const phase = field(turn, 'phase');
  const origin = field(turn, 'origin') ?? 'Unknown';
  const joined = field(turn, 'joinedOrigins');
  if (typeof id !== 'string' || !(TURN_PHASES as readonly unknown[]).includes(phase) || !isOrigin(origin))
    return undefined;
  if (joined === undefined) return { id, origin };
  if (!Array.isArray(joined) || joined.length > 16 || !joined.every(isOrigin)) return undefined;
  return { id, origin, joinedOrigins: joined };
}

/** The turn for which the reference's annotation says the delegation was reported, if any. */
export const reportedTurn = (stored: unknown, delegationId: string): unknown =>
  child(child(child(stored, 'metadata'), 'annotations'), reportedAnnotation(delegationId));

/**
 * What reportOnce does before any delivery: `Deliver` (the parent must hear), or the outcome without one.
 * `stored` is the child's reference as read, undefined when it could not be read.
 */
export function decideReport(
  req: Omit<ReportRequest, 'namespace' | 'reference'>,
  stored: unknown,
):
  | Exclude<ReportOutcome, { kind: 'Reported' }>
  | { readonly kind: 'Deliver'; readonly report: Extract<CompletionReport, { report: true }> } {
  const latest = stored === undefined ? undefined : readLatestTurn(stored);
  const current = latest?.id === req.turnId ? latest : undefined;
  const decision = decideCompletionReport({
    childSession: req.childSession,
    delegationId: req.delegationId,
    delegation: req.delegation,
    turn: {
      id: req.turnId,
      ...(current === undefined ? {} : { origin: current.origin }),
      ...(current?.joinedOrigins === undefined ? {} : { joinedOrigins: current.joinedOrigins }),
    },
    latestTurn: latest === undefined ? { kind: 'Unreadable' } : { kind: 'Read', id: latest.id },
  });
  if (!decision.report) return { kind: 'NotReported', reason: decision.reason };
  if (reportedTurn(stored, req.delegationId) === req.turnId)
    return { kind: 'AlreadyReported', key: decision.key };
  return { kind: 'Deliver', report: decision };
}

type EndedTurn = { readonly id: string; readonly phase: string };
const ENDED_PHASES: readonly unknown[] = ['Completed', 'Failed', 'Interrupted'];

/**
 * The merge patch recordTurn writes: status.turn (joined origins as their distinct set, in first-seen order)
 * and, for an ended turn, status.endedTurns with it appended (once) and the oldest dropped past 32.
 * Ended turns that cannot be read are left out. `now` is an RFC 3339 timestamp.
 */
export function turnStatusPatch(stored: unknown, turn: TurnRecord, now: string): object {
  const resourceVersion = child(child(stored, 'metadata'), 'resourceVersion');
  const listed = child(child(stored, 'status'), 'endedTurns');
  const ended: EndedTurn[] = (Array.isArray(listed) ? listed : [])
    .filter(
      (t): t is EndedTurn => isRecord(t) && typeof t['id'] === 'string' && ENDED_PHASES.includes(t['phase']),
    )
    .map(({ id, phase }) => ({ id, phase }))
    .filter((t) => t.id !== turn.id);
  const body = {
    turn: {
      id: turn.id,
      phase: turn.phase,
      origin: turn.origin,
      joinedOrigins: [...new Set(turn.joinedOrigins)],
      updatedAt: now,
    },
    ...(turn.phase === 'Running'
      ? {}
      : { endedTurns: [...ended, { id: turn.id, phase: turn.phase }].slice(-ENDED_TURNS_MAX) }),
  };
  return {
    metadata: { resourceVersion: typeof resourceVersion === 'string' ? resourceVersion : undefined },
    status: body,
  };
}
