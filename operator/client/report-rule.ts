/**
 * Whether a subagent's completed turn reports "completed its task" to its parent (docs/sidecar.md,
 * "Completion reports to the parent"). Pure; the agent host calls it where it delivers completions (it alone knows whether the
 * delegation was answered), and it ships with the sidecar client so every host applies the same rule.
 *
 * Guarantees: the parent hears once per resumption. A turn opened by a host notice of an already-answered
 * delegation reports nothing new; every other origin reports — a deny-list, so an origin we failed to
 * attribute (Unknown) never silences a real resumption. Equal facts give an equal `key`, so racing callers
 * for one turn spend one report.
 */
import type { TurnOrigin } from '../api/session-reference.ts';

/**
 * Host notices: turns the host opened by itself. Exhaustive on purpose: a new origin fails to compile until
 * someone decides whether it is a host notice.
 */
export const IS_HOST_NOTICE: Readonly<Record<TurnOrigin, boolean>> = {
  ShellNotice: true,
  WatchNotice: true,
  BrowserNotice: true,
  SubagentNotice: true,
  WorktreeNotice: true,
  PersonMessage: false,
  ParentMessage: false,
  Automation: false,
  RelaunchRecovery: false,
  ScheduledResume: false,
  Supervision: false,
  Unknown: false,
};

export interface CompletionFacts {
  readonly childSession: string;
  /** The delegation (the parent's op) this turn answers; defaults to the child session (one per child). */
  readonly delegationId?: string;
  /** Whether the parent was already told this delegation completed. */
  readonly delegation: 'Answered' | 'Unanswered';
  readonly turn: {
    readonly id: string;
    /** What opened the turn; absent when it could not be attributed (treated as Unknown). */
    readonly origin?: TurnOrigin;
    /**
     * Origins of messages steered into the running turn; absent when the host never recorded joins, which
     * cannot prove that nobody steered a resumption in, so it reports (issue 12: silence is the worse failure).
     */
    readonly joinedOrigins?: readonly TurnOrigin[];
  };
  /**
   * The child's latest turn id from its projection, or `Unreadable` when the read failed. A turn superseded
   * before the read reports (the origin read fails open).
   */
  readonly latestTurn: { readonly kind: 'Read'; readonly id: string } | { readonly kind: 'Unreadable' };
}

export const REPORT_REASONS = {
  DelegationUnanswered: 'the parent was never told, so the report is not a duplicate',
  ProjectionUnreadable: "the child's projection could not be read; the rule fails open",
  TurnSuperseded: 'a later turn superseded this one before its origin was read; the rule fails open',
  Resumption: 'the turn was opened by something other than a host notice',
  SteeredResumption: 'a non-host-notice message joined the host-notice turn',
  JoinUnrecorded: 'no join record: a steered resumption cannot be ruled out, so the rule fails open',
  HostNoticeTurn: 'a host notice reopened an answered delegation; there is nothing new to report',
} as const;
export type ReportReason = keyof typeof REPORT_REASONS;

export type CompletionReport =
  | { readonly report: true; readonly reason: Exclude<ReportReason, 'HostNoticeTurn'>; readonly key: string }
  | { readonly report: false; readonly reason: 'HostNoticeTurn' };

/** The dedupe key of a report: one per (delegation, turn); the delegation defaults to the child session. */
export const reportKey = (delegation: string, turnId: string): string =>
  `resume:${delegation}:${turnId}:answer`;

export function decideCompletionReport(facts: CompletionFacts): CompletionReport {
  const key = reportKey(facts.delegationId ?? facts.childSession, facts.turn.id);
  if (facts.delegation === 'Unanswered') return { report: true, reason: 'DelegationUnanswered', key };
  if (facts.latestTurn.kind === 'Unreadable') return { report: true, reason: 'ProjectionUnreadable', key };
  if (facts.latestTurn.id !== facts.turn.id) return { report: true, reason: 'TurnSuperseded', key };
  if (!IS_HOST_NOTICE[facts.turn.origin ?? 'Unknown']) return { report: true, reason: 'Resumption', key };
  if (facts.turn.joinedOrigins === undefined) return { report: true, reason: 'JoinUnrecorded', key };
  const steered = facts.turn.joinedOrigins.some((origin) => !IS_HOST_NOTICE[origin]);
  if (steered) return { report: true, reason: 'SteeredResumption', key };
  return { report: false, reason: 'HostNoticeTurn' };
}
