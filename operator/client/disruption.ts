/**
 * The drain notice the operator puts on a session's reference (`status.disruption`, issue 27), as an agent host
 * reads it to tell its session that the sandbox's pods are about to move. Read leniently: a notice this client
 * version cannot parse (a newer operator's) is reported as none, never as an error that would fail the host.
 */
import { disruptionNoticeSchema, type DisruptionNotice } from '../api/session-reference.ts';

export type { DisruptionNotice } from '../api/session-reference.ts';

/** The notice on a stored SessionReference (its raw JSON); undefined when there is none or it does not parse. */
export function readDisruption(stored: unknown): DisruptionNotice | undefined {
  const status = (stored as { status?: { disruption?: unknown } } | null | undefined)?.status;
  const parsed = disruptionNoticeSchema.safeParse(status?.disruption);
  return parsed.success ? parsed.data : undefined;
}
