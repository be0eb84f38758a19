/** A reference as the index holds it: the identity fields of one SessionReference, nothing else. */
import type { SessionReference } from '../api/objects.ts';
import type { ReferenceState, Role } from '../api/session-reference.ts';

export type ReferenceEntry = {
  /** The SessionReference's name; names blocking references in status, Events and logs. */
  readonly name: string;
  readonly session: string;
  /** Absent: the session has no worktree, which is foreign to every worktree. */
  readonly worktree: string | undefined;
  readonly state: ReferenceState;
  readonly role: Role;
  readonly route: string;
  readonly parentSession: string | undefined;
  /**
   * Its session's latest turn is Running (`status.turn`, written by the agent host); present only then. Read
   * by the idle rule (`spec.idle.whenNoTurnRunning`), never by exclusivity.
   */
  readonly turnRunning?: true;
};

export function referenceEntryOf(ref: SessionReference): ReferenceEntry {
  return {
    name: ref.metadata.name,
    session: ref.spec.session,
    worktree: ref.spec.worktree,
    state: ref.spec.state,
    role: ref.spec.role,
    route: ref.spec.route,
    parentSession: ref.spec.parentSession,
    ...(ref.status?.turn?.phase === 'Running' ? { turnRunning: true } : {}),
  };
}

const encoder = new TextEncoder();

/**
 * Bytes of reference data one entry costs against the 96 KiB budget: the UTF-8 length of its identity
 * fields as JSON, so multibyte ids count by bytes, not characters.
 */
export function referenceBytes(entry: ReferenceEntry): number {
  return encoder.encode(
    JSON.stringify([
      entry.name,
      entry.session,
      entry.worktree ?? null,
      entry.state,
      entry.role,
      entry.route,
      entry.parentSession ?? null,
    ]),
  ).length;
}
