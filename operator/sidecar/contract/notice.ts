/**
 * A shell notice (exit or match) as the sidecar keeps it and the host reads it: the wire format of
 * `GET /v1/notices`, shared by the sidecar process and the host's client.
 */
import { z } from 'zod';
import { sessionIdSchema, shellIdSchema, turnIdSchema } from './marker.ts';

export const noticeSchema = z.object({
  seq: z.int().min(1),
  kind: z.enum(['Exit', 'Match']),
  shell: shellIdSchema,
  session: sessionIdSchema,
  turn: turnIdSchema,
  at: z.string().min(1).max(64),
  /** Monotonic ms: an exit notice is held back until then, so a turn end racing the exit can drop it. */
  dueAt: z.number(),
  line: z.string().max(512).exactOptional(),
});
export type Notice = z.infer<typeof noticeSchema>;

export interface NoticePage {
  readonly notices: readonly Notice[];
  /** Pass it as the next `after`: that acknowledges every notice up to it. */
  readonly cursor: number;
}
