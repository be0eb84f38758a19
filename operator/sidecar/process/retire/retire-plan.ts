/**
 * The retire plan: one explicit state machine per target (a shell group, or an escapee found by its marker),
 * advanced only by `step`. Pure: the driver surveys /proc, feeds the judgement in, journals the new state,
 * then performs the effects — so a restart resumes from the journal (`entryEffects`).
 *
 *   Fenced → NoticesDropped → Terminating(signalled at) → Continuing → Killing → Done | Unreachable
 *
 * - Fenced: the turn is fenced (new registrations for it join the plan); nothing signalled yet.
 * - NoticesDropped: the shell's pending exit and match notices are gone, so the kill publishes none.
 * - Terminating: SIGTERM is going to the group (journaled before it is sent).
 * - Continuing: SIGCONT sent right after, so stopped members can act on the TERM (systemd does the same).
 * - Killing: the grace ran out with members alive: SIGKILL, re-sent each survey until the group is empty.
 * - Done: the group is empty (judged by its members, never by its leader), or its id now belongs to
 *   someone else. Unreachable: members survive that we may not or cannot end; they are reported.
 */
import { identityKey, type ProcessIdentity } from '../../contract/proc-stat.ts';
import {
  isTerminal,
  type DoneHow,
  type RetireState,
  type RetireTarget,
  type TargetProgress,
  type UnreachableReason,
} from '../ledger/retire-targets.ts';
import type { RetireSignal } from '../os/ports.ts';

/** A survey's judgement, for a group (a `GroupJudgement`) or an escapee (an `EscapeeJudgement`). */
export type Observation =
  | { readonly kind: 'Empty' }
  | {
      readonly kind: 'Proven';
      readonly witnesses: readonly ProcessIdentity[];
      readonly members?: readonly ProcessIdentity[];
    }
  | { readonly kind: 'Recycled'; readonly reason: string }
  | { readonly kind: 'Unproven'; readonly reason: string; readonly members: readonly ProcessIdentity[] }
  | { readonly kind: 'Protected'; readonly pids: readonly number[] };

export type RetireEvent =
  | { readonly kind: 'Started' }
  | { readonly kind: 'Surveyed'; readonly observation: Observation }
  | { readonly kind: 'Signalled' }
  | { readonly kind: 'SignalRefused'; readonly signal: RetireSignal; readonly detail: string };

export type SignalScope =
  { readonly kind: 'Group'; readonly pgid: number } | { readonly kind: 'Process'; readonly pid: number };

export type RetireEffect =
  | { readonly kind: 'DropNotices'; readonly shell: string }
  | {
      readonly kind: 'Signal';
      readonly signal: RetireSignal;
      readonly scope: SignalScope;
      /** Re-checked right before the signal: one must still be alive, with its start time, in scope. */
      readonly witnesses: readonly ProcessIdentity[];
    };

export interface RetireLimits {
  /** SIGTERM → SIGKILL, from the Sandbox's `spec.shellReaper.gracePeriodSeconds`. */
  readonly graceMs: number;
  /** SIGKILL → Unreachable: members that outlive it (D state, EPERM) are reported. */
  readonly killTimeoutMs: number;
}

const KNOWN_MAX = 4096;

export const targetId = (target: RetireTarget): string =>
  target.kind === 'Group' ? `group:${target.group.shell}` : `escapee:${identityKey(target.escapee)}`;

export function scopeOf(target: RetireTarget): SignalScope {
  return target.kind === 'Group'
    ? { kind: 'Group', pgid: target.group.pgid }
    : { kind: 'Process', pid: target.escapee.pid };
}

export function startProgress(target: RetireTarget): TargetProgress {
  const seed: ProcessIdentity =
    target.kind === 'Group'
      ? { pid: target.group.pgid, startTime: target.group.leaderStartTime }
      : target.escapee;
  return { id: targetId(target), target, state: { kind: 'Fenced' }, known: [identityKey(seed)] };
}

interface Stepped {
  readonly progress: TargetProgress;
  readonly effects: readonly RetireEffect[];
}

function signal(
  progress: TargetProgress,
  sig: RetireSignal,
  witnesses: readonly ProcessIdentity[],
): RetireEffect {
  return { kind: 'Signal', signal: sig, scope: scopeOf(progress.target), witnesses };
}

function remember(progress: TargetProgress, observation: Observation): readonly string[] {
  if (observation.kind !== 'Proven') return progress.known;
  const members = observation.members ?? observation.witnesses;
  const known = new Set(progress.known);
  for (const m of members) {
    if (known.size >= KNOWN_MAX) break;
    known.add(identityKey(m));
  }
  return [...known];
}

/** The pids an Unreachable reports: only a survey that found members left ends there (Protected has its own). */
function membersOf(o: Extract<Observation, { readonly kind: 'Proven' | 'Unproven' }>): readonly number[] {
  return (o.kind === 'Proven' ? (o.members ?? o.witnesses) : o.members).map((m) => m.pid);
}

function unreachable(reason: UnreachableReason, pids: readonly number[], detail: string): RetireState {
  return { kind: 'Unreachable', reason, pids, detail };
}

function onSurvey(progress: TargetProgress, o: Observation, now: number, limits: RetireLimits): Stepped {
  const state = progress.state;
  const known = remember(progress, o);
  const to = (next: RetireState, effects: readonly RetireEffect[] = []): Stepped => ({
    progress: { ...progress, state: next, known },
    effects,
  });
  if (state.kind === 'Fenced' || isTerminal(state)) return { progress, effects: [] };
  // Whatever the phase: a protected member is never signalled, and an empty or reused group id is done.
  if (o.kind === 'Protected')
    return to(unreachable('Protected', o.pids, 'the group holds a protected process'));
  if (state.kind === 'NoticesDropped') {
    switch (o.kind) {
      case 'Empty':
        return to({ kind: 'Done', how: 'AlreadyGone' });
      case 'Recycled':
        return to({ kind: 'Done', how: 'Recycled', detail: o.reason });
      case 'Unproven':
        return to(unreachable('Unproven', membersOf(o), o.reason));
      case 'Proven':
        return to({ kind: 'Terminating', signalledAt: now, witnesses: o.witnesses }, [
          signal(progress, 'SIGTERM', o.witnesses),
        ]);
    }
  }
  const how: DoneHow = state.kind === 'Killing' ? 'Killed' : 'Exited';
  if (o.kind === 'Empty') return to({ kind: 'Done', how });
  if (o.kind === 'Recycled') return to({ kind: 'Done', how, detail: o.reason });
  if (state.kind === 'Killing') {
    if (now - state.killedAt >= limits.killTimeoutMs) {
      const reason = o.kind === 'Unproven' ? 'Unproven' : 'Survived';
      return to(unreachable(reason, membersOf(o), `members outlived SIGKILL by ${limits.killTimeoutMs} ms`));
    }
    if (o.kind === 'Unproven') return to(state);
    // Re-sent each survey: one group SIGKILL cannot be outrun by fork(), but members may join later.
    return to({ ...state, witnesses: o.witnesses }, [signal(progress, 'SIGKILL', o.witnesses)]);
  }
  const graceOver = now - state.signalledAt >= limits.graceMs;
  if (o.kind === 'Unproven')
    return graceOver ? to(unreachable('Unproven', membersOf(o), o.reason)) : to(state);
  if (!graceOver) return to({ ...state, witnesses: o.witnesses });
  return to({ kind: 'Killing', signalledAt: state.signalledAt, killedAt: now, witnesses: o.witnesses }, [
    signal(progress, 'SIGKILL', o.witnesses),
  ]);
}

/** Advances one target by one event. Terminal states ignore every event. */
export function step(
  progress: TargetProgress,
  event: RetireEvent,
  now: number,
  limits: RetireLimits,
): Stepped {
  const state = progress.state;
  if (isTerminal(state)) return { progress, effects: [] };
  switch (event.kind) {
    case 'Started':
      if (state.kind !== 'Fenced') return { progress, effects: [] };
      return {
        progress: { ...progress, state: { kind: 'NoticesDropped' } },
        effects:
          progress.target.kind === 'Group'
            ? [{ kind: 'DropNotices', shell: progress.target.group.shell }]
            : [],
      };
    case 'Signalled':
      if (state.kind !== 'Terminating') return { progress, effects: [] };
      return {
        progress: {
          ...progress,
          state: { kind: 'Continuing', signalledAt: state.signalledAt, witnesses: state.witnesses },
        },
        effects: [signal(progress, 'SIGCONT', state.witnesses)],
      };
    case 'SignalRefused':
      return {
        progress: {
          ...progress,
          state: {
            kind: 'Unreachable',
            reason: 'Refused',
            pids: [],
            detail: `${event.signal} refused: ${event.detail}`,
          },
        },
        effects: [],
      };
    case 'Surveyed':
      return onSurvey(progress, event.observation, now, limits);
  }
}

/**
 * The effects to re-issue when a restart finds a target mid-retire. The journal is written before the
 * signal, so the signal may or may not have gone out: TERM, CONT and KILL are safe to send twice.
 */
export function entryEffects(progress: TargetProgress): readonly RetireEffect[] {
  const state = progress.state;
  switch (state.kind) {
    case 'Fenced':
    case 'Done':
    case 'Unreachable':
      return [];
    case 'NoticesDropped':
      return progress.target.kind === 'Group'
        ? [{ kind: 'DropNotices', shell: progress.target.group.shell }]
        : [];
    case 'Terminating':
      return [signal(progress, 'SIGTERM', state.witnesses)];
    case 'Continuing':
      return [signal(progress, 'SIGCONT', state.witnesses)];
    case 'Killing':
      return [signal(progress, 'SIGKILL', state.witnesses)];
  }
}

/**
 * When this target next needs a survey regardless of polling: the end of its grace (SIGKILL is due) or of
 * its kill timeout. The driver sleeps no longer than this, so SIGKILL goes out when the grace ends.
 */
export function nextDeadline(progress: TargetProgress, limits: RetireLimits): number | undefined {
  const state = progress.state;
  switch (state.kind) {
    case 'Terminating':
    case 'Continuing':
      return state.signalledAt + limits.graceMs;
    case 'Killing':
      return state.killedAt + limits.killTimeoutMs;
    case 'Fenced':
    case 'NoticesDropped':
    case 'Done':
    case 'Unreachable':
      return undefined;
  }
}
