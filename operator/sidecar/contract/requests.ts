/**
 * What the local endpoint accepts, and how it refuses. Pure. Every body is a strict object: unknown fields,
 * strings for numbers, floats, NaN and out-of-range pids are refused with 4xx before anything is read or
 * signalled. A turn-end request names a session and a turn, never a group: the sidecar signals only groups
 * from its own records. A registration names the group, which the sidecar then proves against /proc.
 */
import { z } from 'zod';
import { ROLES, TURN_ORIGINS } from '../../api/session-reference.ts';
import { sessionIdSchema, shellIdSchema, turnIdSchema } from './marker.ts';

/** Linux's largest pid_max (2^22): no pid or group id can exceed it. */
export const PID_MAX = 4_194_304;
/** Request bodies are small JSON objects; anything larger is refused unread (413). */
export const BODY_MAX_BYTES = 8 * 1024;
export const MATCH_MAX = 256;
/** The longest a notice read may wait for a notice. */
export const NOTICE_WAIT_MAX_MS = 30_000;

/** 0 (own group), -1 (everything), 1 (PID 1) and negatives never pass. */
export const pidSchema = z.int().min(2).max(PID_MAX);

export const registerShellRequestSchema = z
  .strictObject({
    session: sessionIdSchema,
    turn: turnIdSchema,
    shell: shellIdSchema,
    pgid: pidSchema,
    leaderPid: pidSchema,
    leaderStartTime: z.int().min(0),
    match: z.string().min(1).max(MATCH_MAX).exactOptional(),
  })
  .refine((r) => r.pgid === r.leaderPid, {
    message: 'a shell leads its own process group: spawn it detached so that pid = pgid',
    path: ['pgid'],
  });
export type RegisterShellRequest = z.infer<typeof registerShellRequestSchema>;

export const endTurnRequestSchema = z.strictObject({
  session: sessionIdSchema,
  turn: turnIdSchema,
  phase: z.enum(['Completed', 'Failed', 'Interrupted']),
  role: z.enum(ROLES),
  origin: z.enum(TURN_ORIGINS).exactOptional(),
});
export type EndTurnRequest = z.infer<typeof endTurnRequestSchema>;

const decimal = (max: number) =>
  z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number)
    .pipe(z.int().min(0).max(max));

export const noticeQuerySchema = z.strictObject({
  after: decimal(Number.MAX_SAFE_INTEGER).default(0),
  waitMs: decimal(NOTICE_WAIT_MAX_MS).default(0),
});
export type NoticeQuery = z.infer<typeof noticeQuerySchema>;

/** Every refusal the endpoint gives, with its HTTP status. The `code` is in the JSON body. */
export const ERROR_STATUS = {
  InvalidRequest: 400,
  ProtectedProcess: 400,
  NotFound: 404,
  MethodNotAllowed: 405,
  TurnEnded: 409,
  ShellConflict: 409,
  /** A turn end the SessionReference does not confirm (role, turn or phase). */
  Disagrees: 403,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  IdentityMismatch: 422,
  ShuttingDown: 503,
  Internal: 500,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  readonly code: ErrorCode;
  readonly message: string;
  readonly issues?: readonly { readonly path: string; readonly message: string }[];
}

/** Turns a zod failure into the endpoint's 400 body, naming each offending field. */
export function invalidRequest(error: z.ZodError): ErrorBody {
  return {
    code: 'InvalidRequest',
    message: 'the request does not match its schema',
    issues: error.issues.slice(0, 16).map((issue) => ({
      path: issue.path.map(String).join('.') || '<body>',
      message: issue.message,
    })),
  };
}

/**
 * Pids a request may never name: the sidecar itself, its own group, PID 1 (pause) and the agent hosts it
 * has seen. A registration naming one is refused (400) before /proc is read.
 */
export function protectedPidIn(
  request: RegisterShellRequest,
  protectedPids: ReadonlySet<number>,
): number | undefined {
  return [request.pgid, request.leaderPid].find((pid) => protectedPids.has(pid));
}
