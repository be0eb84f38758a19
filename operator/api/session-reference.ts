/**
 * The `SessionReference` resource: one per (session, sandbox). Attached or Detached (a tombstone that still
 * blocks destruction). Its status carries the session's turn (written by the agent host) and what the shell
 * reaper retired (written by the sidecar).
 */
import { z } from 'zod';
import { count, identifier, immutable, objectName, timestamp } from './fields.ts';
import {
  MESSAGE_MAX,
  ROUTE_MAX,
  SANDBOX_NAME_MAX,
  SESSION_ID_MAX,
  TURN_ID_MAX,
  WORKTREE_ID_MAX,
} from './limits.ts';

export const ROLES = ['Root', 'Subagent', 'Board', 'Ticket'] as const;
export type Role = (typeof ROLES)[number];
export const REFERENCE_STATES = ['Attached', 'Detached'] as const;
export type ReferenceState = (typeof REFERENCE_STATES)[number];
export const TURN_PHASES = ['Running', 'Completed', 'Failed', 'Interrupted'] as const;
export type TurnPhase = (typeof TURN_PHASES)[number];
/** What opened a turn (docs/sidecar.md, "Completion reports to the parent"). The first five are host notices. */
export const TURN_ORIGINS = [
  'ShellNotice',
  'WatchNotice',
  'BrowserNotice',
  'SubagentNotice',
  'WorktreeNotice',
  'PersonMessage',
  'ParentMessage',
  'Automation',
  'RelaunchRecovery',
  'ScheduledResume',
  'Supervision',
  'Unknown',
] as const;
export type TurnOrigin = (typeof TURN_ORIGINS)[number];

const sessionId = (description: string) => identifier(description, SESSION_ID_MAX);

/** A reference's route: changeable on a SessionReference (a re-attach records its own), not on a sandbox claim. */
export const routeSchema = z
  .string()
  .min(1)
  .max(ROUTE_MAX)
  .describe('The route recorded with the attach, e.g. shared-control-v1/….');

/**
 * The session's identity in a reference, immutable: a SandboxClaim carries the same fields, with the same
 * schemas and rules, as the SessionReference its binding creates (sandbox-claim.ts).
 */
export const sessionIdentityShape = {
  session: immutable(sessionId('The session id, e.g. workspace_123.'), 'spec.session'),
  worktree: immutable(
    identifier(
      "The session's worktree; absent means it has none, which is foreign to every worktree.",
      WORKTREE_ID_MAX,
    ),
    'spec.worktree',
  ).optional(),
  route: routeSchema,
  role: immutable(z.enum(ROLES).describe('Root, Subagent, Board or Ticket.'), 'spec.role'),
  parentSession: immutable(
    sessionId('For subagents: the session that delegated to this one.'),
    'spec.parentSession',
  ).optional(),
};

/** The CEL rules over the session's identity. */
export const SESSION_IDENTITY_RULES = [
  {
    rule: 'has(self.worktree) == has(oldSelf.worktree)',
    message: 'spec.worktree cannot be added or removed after creation',
  },
  {
    rule: 'has(self.parentSession) == has(oldSelf.parentSession)',
    message: 'spec.parentSession cannot be added or removed after creation',
  },
  {
    rule: "self.role != 'Subagent' || has(self.parentSession)",
    message: 'spec.parentSession is required when spec.role is Subagent',
  },
] as const;

export const sessionReferenceSpecSchema = z
  .object({
    sandbox: immutable(
      objectName('Name of the Sandbox (same namespace) this session uses.', SANDBOX_NAME_MAX),
      'spec.sandbox',
    ),
    ...sessionIdentityShape,
    state: z
      .enum(REFERENCE_STATES)
      .default('Attached')
      .describe(
        'Attached, or Detached: a tombstone that still blocks destruction until pruned or forgotten.',
      ),
  })
  .meta({ 'x-kubernetes-validations': [...SESSION_IDENTITY_RULES] })
  .describe('Which session uses which sandbox, from which worktree.');
export type SessionReferenceSpec = z.infer<typeof sessionReferenceSpecSchema>;

export const turnSchema = z
  .object({
    id: identifier('The turn id.', TURN_ID_MAX),
    phase: z.enum(TURN_PHASES).describe('Running, Completed, Failed or Interrupted.'),
    origin: z
      .enum(TURN_ORIGINS)
      .default('Unknown')
      .describe('What opened the turn; the first five values are host notices.'),
    joinedOrigins: z
      .array(z.enum(TURN_ORIGINS))
      .max(16)
      .optional()
      .describe(
        'Origins of messages steered into the running turn (they can make a host-notice turn report).',
      ),
    updatedAt: timestamp('When the agent host last wrote the turn.').optional(),
  })
  .describe("The session's latest turn, written by the agent host.");
export type Turn = z.infer<typeof turnSchema>;

/** Ended turns the status remembers besides the latest, so a watch gap loses no completed turn. */
export const ENDED_TURNS_MAX = 32;

export const endedTurnSchema = z
  .object({
    id: identifier('The turn id.', TURN_ID_MAX),
    phase: z.enum(['Completed', 'Failed', 'Interrupted']).describe('How the turn ended.'),
  })
  .describe('One ended turn.');
export type EndedTurn = z.infer<typeof endedTurnSchema>;

export const shellsSchema = z
  .object({
    retiredTurn: identifier('The turn whose shells were retired last.', TURN_ID_MAX),
    retiredGroups: count('Shell groups retired at the end of that turn.'),
    unreachable: count('Processes the reaper found but could not end (escapees, permission).'),
    retiredAt: timestamp('When the retire finished.').optional(),
    message: z.string().max(MESSAGE_MAX).optional().describe('Detail, e.g. why a group was unreachable.'),
  })
  .describe('What the shell reaper sidecar did, written by the sidecar.');
export type ShellsStatus = z.infer<typeof shellsSchema>;

export const sessionReferenceStatusSchema = z
  .object({
    turn: turnSchema.optional(),
    endedTurns: z
      .array(endedTurnSchema)
      .max(ENDED_TURNS_MAX)
      .optional()
      .describe(
        'The last ended turns, oldest first, appended by the agent host with status.turn: the shell reaper retires every completed one it has not seen, so no completed turn is lost when status.turn is overwritten between two reads.',
      ),
    shells: shellsSchema.optional(),
    detachedAt: timestamp('When the reference became a tombstone.').optional(),
  })
  .describe('Observed state of the session in this sandbox.');
export type SessionReferenceStatus = z.infer<typeof sessionReferenceStatusSchema>;
