/**
 * The journal's entries: what the sidecar records before it acts, so a restart resumes instead of
 * forgetting. Parsed with zod at replay (a line that does not parse is skipped and counted), and typed
 * against the core's own types so the two cannot drift.
 */
import { z } from 'zod';
import { ROLES } from '../../../api/session-reference.ts';
import { sessionIdSchema, shellIdSchema, turnIdSchema } from '../../contract/marker.ts';
import { noticeSchema } from '../../contract/notice.ts';
import type { ProcessIdentity } from '../../contract/proc-stat.ts';
import type { TurnEndDecision } from '../turns/turn-decision.ts';
import type { ShellGroup } from './shell-group.ts';
import type { RetireState, RetireSummary, TargetProgress } from './retire-targets.ts';

const pid = z.int().min(1);
const tick = z.int().min(0);
const time = z.string().min(1).max(64);

const identitySchema: z.ZodType<ProcessIdentity> = z.object({ pid, startTime: tick });
const witnesses = z.array(identitySchema).max(64);

export const shellGroupSchema: z.ZodType<ShellGroup> = z.object({
  shell: shellIdSchema,
  session: sessionIdSchema,
  turn: turnIdSchema,
  pgid: pid,
  leaderStartTime: tick,
  hostPid: pid.exactOptional(),
  hostStartTime: tick.exactOptional(),
  match: z.string().max(256).exactOptional(),
});

const retireStateSchema: z.ZodType<RetireState> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('Fenced') }),
  z.object({ kind: z.literal('NoticesDropped') }),
  z.object({ kind: z.literal('Terminating'), signalledAt: z.number(), witnesses }),
  z.object({ kind: z.literal('Continuing'), signalledAt: z.number(), witnesses }),
  z.object({ kind: z.literal('Killing'), signalledAt: z.number(), killedAt: z.number(), witnesses }),
  z.object({
    kind: z.literal('Done'),
    how: z.enum(['AlreadyGone', 'Exited', 'Killed', 'Recycled']),
    detail: z.string().exactOptional(),
  }),
  z.object({
    kind: z.literal('Unreachable'),
    reason: z.enum(['Refused', 'Protected', 'Unproven', 'Survived']),
    pids: z.array(pid),
    detail: z.string(),
  }),
]);

const markerSchema = z.object({
  session: sessionIdSchema,
  turn: turnIdSchema,
  shell: shellIdSchema.exactOptional(),
});

const targetProgressSchema: z.ZodType<TargetProgress> = z.object({
  id: z.string().min(1),
  target: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('Group'), group: shellGroupSchema }),
    z.object({
      kind: z.literal('Escapee'),
      escapee: z.object({ pid, startTime: tick, marker: markerSchema }),
    }),
  ]),
  state: retireStateSchema,
  known: z.array(z.string()),
});

const decisionSchema: z.ZodType<TurnEndDecision> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('Retire'), reason: z.literal('CompletedSubagentTurn') }),
  z.object({
    kind: z.literal('Keep'),
    reason: z.enum(['NotSubagent', 'TurnFailed', 'TurnInterrupted', 'TurnEndLost']),
  }),
]);

const summarySchema: z.ZodType<RetireSummary> = z.object({
  retiredGroups: z.int().min(0),
  killedGroups: z.int().min(0),
  escapees: z.int().min(0),
  unreachable: z.int().min(0),
  unreachablePids: z.array(pid),
  message: z.string(),
});

export const journalEntrySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ShellRegistered'), at: time, group: shellGroupSchema }),
  z.object({ type: z.literal('ShellExited'), at: time, shell: shellIdSchema }),
  z.object({ type: z.literal('ShellMatched'), at: time, shell: shellIdSchema }),
  z.object({
    type: z.literal('TurnEnded'),
    at: time,
    session: sessionIdSchema,
    turn: turnIdSchema,
    phase: z.enum(['Completed', 'Failed', 'Interrupted']),
    role: z.enum(ROLES),
    decision: decisionSchema,
  }),
  z.object({
    type: z.literal('RetireFenced'),
    at: time,
    key: z.string(),
    session: sessionIdSchema,
    turn: turnIdSchema,
    turns: z.array(turnIdSchema),
  }),
  z.object({ type: z.literal('TargetUpdated'), key: z.string(), progress: targetProgressSchema }),
  z.object({ type: z.literal('RetireFinished'), at: time, key: z.string(), summary: summarySchema }),
  z.object({ type: z.literal('NoticePublished'), notice: noticeSchema }),
  z.object({ type: z.literal('NoticesDropped'), shells: z.array(shellIdSchema) }),
  z.object({
    type: z.literal('NoticesAcked'),
    upTo: z.int().min(0),
    /** Written by compaction: numbering continues past dropped notices a host may have seen. */
    nextSeq: z.int().min(1).exactOptional(),
  }),
]);
export type JournalEntry = z.infer<typeof journalEntrySchema>;
export type JournalEntryOf<T extends JournalEntry['type']> = Extract<JournalEntry, { type: T }>;
