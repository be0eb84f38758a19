/**
 * The ledger: what the sidecar knows, as a fold of its journal (shells, turn ends, fences, retires). No I/O:
 * `applyEntry` is the only writer, so replaying the journal after a restart rebuilds exactly this state.
 *
 * Scope of a retire (docs/sidecar.md, "Turn ends"): a completed subagent turn retires every shell the session registered for
 * that turn, plus the shells of its earlier turns that ended failed or interrupted (they were kept, not
 * forgiven). Shells of a later turn are never in it: a resumed turn's shells wait for that turn's end.
 */
import type { Role } from '../../../api/session-reference.ts';
import type { JournalEntry } from './journal-entries.ts';
import { turnKey, type EndedPhase, type TurnEndDecision } from '../turns/turn-decision.ts';
import type { ShellGroup } from './shell-group.ts';
import { isTerminal, type RetireSummary, type TargetProgress } from './retire-targets.ts';

export interface ShellRecord {
  readonly group: ShellGroup;
  status: 'Running' | 'Exited';
  /** A match notice was published: at most one per shell. */
  matched: boolean;
  readonly registeredAt: string;
}

export interface TurnEndRecord {
  readonly session: string;
  readonly turn: string;
  readonly phase: EndedPhase;
  readonly role: Role;
  readonly decision: TurnEndDecision;
  readonly at: string;
}

export interface TurnRetire {
  readonly key: string;
  readonly session: string;
  readonly turn: string;
  /** The turns whose shells this retire covers, fenced together. */
  readonly turns: readonly string[];
  readonly fencedAt: string;
  readonly targets: Map<string, TargetProgress>;
  finished?: { readonly summary: RetireSummary; readonly at: string };
}

export interface Ledger {
  readonly shells: Map<string, ShellRecord>;
  readonly turnEnds: Map<string, TurnEndRecord>;
  readonly retires: Map<string, TurnRetire>;
  /** turnKey → the retire that fenced it: a registration for a fenced turn joins that retire. */
  readonly fences: Map<string, string>;
  /** shell → the unfinished retire that holds it, so two retires never plan one group. */
  readonly retiring: Map<string, string>;
}

export function emptyLedger(): Ledger {
  return {
    shells: new Map(),
    turnEnds: new Map(),
    retires: new Map(),
    fences: new Map(),
    retiring: new Map(),
  };
}

/** Applies one journal entry. Notice entries belong to the outbox and are ignored here. */
export function applyEntry(ledger: Ledger, entry: JournalEntry): void {
  switch (entry.type) {
    case 'ShellRegistered':
      ledger.shells.set(entry.group.shell, {
        group: entry.group,
        status: 'Running',
        matched: false,
        registeredAt: entry.at,
      });
      return;
    case 'ShellExited': {
      const record = ledger.shells.get(entry.shell);
      if (record !== undefined) record.status = 'Exited';
      return;
    }
    case 'ShellMatched': {
      const record = ledger.shells.get(entry.shell);
      if (record !== undefined) record.matched = true;
      return;
    }
    case 'TurnEnded': {
      const key = turnKey(entry.session, entry.turn);
      if (ledger.turnEnds.get(key)?.decision.kind === 'Retire') return;
      const { session, turn, phase, role, decision, at } = entry;
      ledger.turnEnds.set(key, { session, turn, phase, role, decision, at });
      return;
    }
    case 'RetireFenced': {
      const { key, session, turn, turns, at } = entry;
      ledger.retires.set(key, { key, session, turn, turns, fencedAt: at, targets: new Map() });
      for (const t of turns) ledger.fences.set(turnKey(session, t), key);
      return;
    }
    case 'TargetUpdated': {
      const retire = ledger.retires.get(entry.key);
      if (retire === undefined) return;
      retire.targets.set(entry.progress.id, entry.progress);
      if (!isTerminal(entry.progress.state)) delete retire.finished;
      if (entry.progress.target.kind === 'Group')
        ledger.retiring.set(entry.progress.target.group.shell, entry.key);
      return;
    }
    case 'RetireFinished': {
      const retire = ledger.retires.get(entry.key);
      if (retire === undefined) return;
      retire.finished = { summary: entry.summary, at: entry.at };
      // A finished retire forgets its shells, running or exited: nothing about them is published again.
      for (const progress of retire.targets.values()) {
        if (progress.target.kind !== 'Group') continue;
        ledger.shells.delete(progress.target.group.shell);
        ledger.retiring.delete(progress.target.group.shell);
      }
      return;
    }
    case 'NoticePublished':
    case 'NoticesDropped':
    case 'NoticesAcked':
      return;
  }
}

export interface RetirePlan {
  readonly turns: readonly string[];
  readonly groups: readonly ShellGroup[];
}

/** The turns and shell groups a retire of `turn` covers (see the module doc). */
export function planRetire(ledger: Ledger, session: string, turn: string): RetirePlan {
  const turns = new Set([turn]);
  for (const end of ledger.turnEnds.values()) {
    if (end.session === session && end.decision.kind === 'Keep') turns.add(end.turn);
  }
  const groups = [...ledger.shells.values()]
    .map((record) => record.group)
    .filter((g) => g.session === session && turns.has(g.turn) && !ledger.retiring.has(g.shell));
  return { turns: [...turns], groups };
}

/**
 * The session's turns that have shells but no recorded end and no fence, and that `shown` (every turn a
 * full status shows, turns/turn-history.ts) does not name: by the registration contract (status.turn is written
 * before its shells register) they ended while nobody read, and their end fell out of the history.
 */
export function unshownTurns(ledger: Ledger, session: string, shown: ReadonlySet<string>): string[] {
  const turns = new Set<string>();
  for (const { group } of ledger.shells.values()) {
    if (group.session !== session || shown.has(group.turn)) continue;
    const key = turnKey(session, group.turn);
    if (!ledger.turnEnds.has(key) && !ledger.fences.has(key)) turns.add(group.turn);
  }
  return [...turns];
}

/** The unfinished retire a registration for this turn must join, or the finished one it must reopen. */
export function fenceOf(ledger: Ledger, session: string, turn: string): TurnRetire | undefined {
  const key = ledger.fences.get(turnKey(session, turn));
  return key === undefined ? undefined : ledger.retires.get(key);
}

export function isFinishable(retire: TurnRetire): boolean {
  return [...retire.targets.values()].every((p) => isTerminal(p.state));
}

export function summarize(retire: TurnRetire): RetireSummary {
  let retiredGroups = 0;
  let killedGroups = 0;
  let escapees = 0;
  let unreachable = 0;
  const pids = new Set<number>();
  const details: string[] = [];
  for (const { target, state } of retire.targets.values()) {
    if (target.kind === 'Escapee') escapees += 1;
    if (state.kind === 'Done' && target.kind === 'Group') {
      retiredGroups += 1;
      if (state.how === 'Killed') killedGroups += 1;
    }
    if (state.kind === 'Unreachable') {
      unreachable += Math.max(1, state.pids.length);
      for (const p of state.pids) pids.add(p);
      details.push(`${state.reason}: ${state.detail}`);
    }
  }
  const head =
    `${retiredGroups} shell group(s) retired (${killedGroups} needed SIGKILL), ` +
    `${escapees} escapee(s), ${unreachable} unreachable`;
  const message = details.length === 0 ? head : `${head}; ${details.join('; ')}`;
  return {
    retiredGroups,
    killedGroups,
    escapees,
    unreachable,
    unreachablePids: [...pids],
    message: message.slice(0, 1024),
  };
}

const FINISHED_RETIRES_KEPT = 512;
const TURN_ENDS_KEPT = 2048;

/**
 * Bounds the ledger in place, before it is journaled compactly. It keeps every kept (failed, interrupted)
 * turn that still has shells, whatever its age — dropping it would let those shells escape the next
 * completed turn (issue 12) — and the newest other turn ends and finished retires, bounded, so duplicate
 * turn-end signals stay idempotent. Unfinished retires are always kept.
 */
export function pruneLedger(ledger: Ledger): void {
  const withShells = new Set([...ledger.shells.values()].map((r) => turnKey(r.group.session, r.group.turn)));
  const ends = [...ledger.turnEnds.entries()];
  const needed = (key: string, end: TurnEndRecord) => end.decision.kind === 'Keep' && withShells.has(key);
  const others = ends.filter(([key, end]) => !needed(key, end)).map(([key]) => key);
  for (const key of others.slice(0, Math.max(0, others.length - TURN_ENDS_KEPT))) ledger.turnEnds.delete(key);
  const finished = [...ledger.retires.values()].filter((r) => r.finished !== undefined);
  for (const retire of finished.slice(0, Math.max(0, finished.length - FINISHED_RETIRES_KEPT))) {
    ledger.retires.delete(retire.key);
    for (const [fence, key] of ledger.fences) if (key === retire.key) ledger.fences.delete(fence);
  }
}

/** Entries that rebuild this ledger (prune it first), for compacting the journal. */
export function compactLedger(ledger: Ledger): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const record of ledger.shells.values()) {
    entries.push({ type: 'ShellRegistered', at: record.registeredAt, group: record.group });
    const { shell } = record.group;
    if (record.status === 'Exited') entries.push({ type: 'ShellExited', at: record.registeredAt, shell });
    if (record.matched) entries.push({ type: 'ShellMatched', at: record.registeredAt, shell });
  }
  for (const end of ledger.turnEnds.values()) entries.push({ type: 'TurnEnded', ...end });
  for (const retire of ledger.retires.values()) {
    const { key, session, turn, turns, fencedAt } = retire;
    entries.push({ type: 'RetireFenced', at: fencedAt, key, session, turn, turns: [...turns] });
    for (const progress of retire.targets.values()) entries.push({ type: 'TargetUpdated', key, progress });
    if (retire.finished !== undefined) {
      entries.push({ type: 'RetireFinished', at: retire.finished.at, key, summary: retire.finished.summary });
    }
  }
  return entries;
}
