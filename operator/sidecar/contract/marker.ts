/**
 * The environment marker every registered shell carries, and that its descendants inherit. A /proc scan
 * reads it from `/proc/<pid>/environ` (the environment given to execve) to find a shell's members and its
 * escapees (`setsid`, double fork). A process started with a cleaned environment (`env -i`) loses it: that
 * escapee cannot be found without cgroups, and the docs say so.
 */
import { z } from 'zod';
import { IDENTIFIER_PATTERN, SESSION_ID_MAX, TURN_ID_MAX } from '../../api/limits.ts';

export const MARKER_ENV = {
  session: 'SANDBOX_REAPER_SESSION',
  turn: 'SANDBOX_REAPER_TURN',
  shell: 'SANDBOX_REAPER_SHELL',
} as const;

const identifierPattern = new RegExp(IDENTIFIER_PATTERN);
export const sessionIdSchema = z.string().min(1).max(SESSION_ID_MAX).regex(identifierPattern);
export const turnIdSchema = z.string().min(1).max(TURN_ID_MAX).regex(identifierPattern);
/** Shell ids are chosen by the host before spawning (they name the output file), e.g. a UUID. */
export const shellIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9-]*$/);

/** Who a marked process belongs to. */
export interface Marker {
  readonly session: string;
  readonly turn: string;
  /** Absent for processes a host started with only the session and turn variables. */
  readonly shell?: string;
}

/** What reading a process's marker gave. `Unreadable` carries the errno (EACCES without CAP_SYS_PTRACE). */
export type MarkerRead =
  | { readonly kind: 'Marked'; readonly marker: Marker }
  | { readonly kind: 'Unmarked' }
  | { readonly kind: 'Unreadable'; readonly reason: string }
  | { readonly kind: 'Gone' };

/** The variables a host sets on a shell it spawns (and its descendants inherit). */
export function markerEnvironment(marker: Required<Marker>): Record<string, string> {
  return {
    [MARKER_ENV.session]: marker.session,
    [MARKER_ENV.turn]: marker.turn,
    [MARKER_ENV.shell]: marker.shell,
  };
}

/**
 * Reads the marker out of a NUL-separated environ block. Values that are not valid ids count as no marker,
 * so a malformed or hostile value never names a session.
 */
export function parseMarker(environ: string): MarkerRead {
  let session: string | undefined;
  let turn: string | undefined;
  let shell: string | undefined;
  for (const entry of environ.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq <= 0) continue;
    const name = entry.slice(0, eq);
    const value = entry.slice(eq + 1);
    if (name === MARKER_ENV.session) session = value;
    else if (name === MARKER_ENV.turn) turn = value;
    else if (name === MARKER_ENV.shell) shell = value;
  }
  const parsedSession = sessionIdSchema.safeParse(session);
  const parsedTurn = turnIdSchema.safeParse(turn);
  if (!parsedSession.success || !parsedTurn.success) return { kind: 'Unmarked' };
  const parsedShell = shellIdSchema.safeParse(shell);
  const marker: Marker = parsedShell.success
    ? { session: parsedSession.data, turn: parsedTurn.data, shell: parsedShell.data }
    : { session: parsedSession.data, turn: parsedTurn.data };
  return { kind: 'Marked', marker };
}

/** Whether a marker names exactly this shell of this session and turn. */
export function markerNamesShell(marker: Marker, shell: Required<Marker>): boolean {
  return marker.session === shell.session && marker.turn === shell.turn && marker.shell === shell.shell;
}
