/**
 * `kubectl sandbox shells`: what the shell reaper sidecar retired for one session (status.shells, written by
 * the sidecar), the session's latest turn (status.turn, written by the agent host), the reaper's Events on
 * the SessionReference, and, when nothing was retired, why not. Pure.
 */
import type { Sandbox, SessionReference } from '../../api/objects.ts';
import type { ShellsStatus, Turn } from '../../api/session-reference.ts';
import type { EventSummary } from './ports.ts';

export type ShellsView = {
  readonly reference: {
    readonly namespace: string;
    readonly name: string;
    readonly sandbox: string;
    readonly session: string;
    readonly worktree: string | undefined;
    readonly role: string;
    readonly parentSession: string | undefined;
    readonly state: string;
  };
  readonly turn: Turn | undefined;
  readonly shells: ShellsStatus | undefined;
  /** The sandbox's reaper setting; undefined when the Sandbox is gone. */
  readonly reaper: { readonly enabled: boolean; readonly gracePeriodSeconds: number } | undefined;
  readonly events: readonly EventSummary[];
  /** Why nothing was retired, or why the last retire may not be the whole story. */
  readonly notes: readonly string[];
};

/** The Event reasons the sidecar records on a SessionReference. */
const REAPER_REASONS = new Set(['ShellsRetired', 'ShellsUnreachable', 'ShellRetireFailed']);
const RECENT_EVENTS = 10;

export function shellsView(
  reference: SessionReference,
  sandbox: Sandbox | undefined,
  events: readonly EventSummary[],
): ShellsView {
  const { metadata, spec, status } = reference;
  const reaper = sandbox?.spec.shellReaper;
  const view: Omit<ShellsView, 'notes'> = {
    reference: {
      namespace: metadata.namespace,
      name: metadata.name,
      sandbox: spec.sandbox,
      session: spec.session,
      worktree: spec.worktree,
      role: spec.role,
      parentSession: spec.parentSession,
      state: spec.state,
    },
    turn: status?.turn,
    shells: status?.shells,
    reaper: reaper === undefined ? undefined : { ...reaper },
    events: events.filter((event) => REAPER_REASONS.has(event.reason)).slice(-RECENT_EVENTS),
  };
  return { ...view, notes: notesFor(view) };
}

function notesFor(view: Omit<ShellsView, 'notes'>): string[] {
  const notes: string[] = [];
  const { reference, turn, shells, reaper } = view;
  if (reaper === undefined) notes.push(`Sandbox ${reference.sandbox} does not exist (any more).`);
  else if (!reaper.enabled)
    notes.push(`Sandbox ${reference.sandbox} runs no shell reaper (spec.shellReaper.enabled is false).`);
  if (reference.role !== 'Subagent')
    notes.push(
      `This is a ${reference.role} session: only a subagent's shells are retired when its turn completes.`,
    );
  if (turn === undefined) notes.push('The agent host has written no turn for this session yet.');
  else if (turn.phase === 'Running')
    notes.push(`Turn ${turn.id} is still running; its shells are retired when it completes.`);
  else if (turn.phase === 'Failed' || turn.phase === 'Interrupted')
    notes.push(`Turn ${turn.id} ended ${turn.phase}: a failed or interrupted turn keeps its shells.`);
  else if (shells?.retiredTurn !== turn.id && reference.role === 'Subagent' && reaper?.enabled === true)
    notes.push(
      `Turn ${turn.id} completed but its retire is not recorded yet (the sidecar retries from its journal).`,
    );
  if (shells !== undefined && shells.unreachable > 0)
    notes.push(`${shells.unreachable} process(es) could not be ended; the Events say which and why.`);
  return notes;
}
