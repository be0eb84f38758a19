/**
 * Identity: is this process group (or escapee) still the one we recorded? Pure: the imperative survey reads
 * /proc and hands the facts in.
 *
 * Guarantees: a group is `Proven` only when a live member is ours — the leader with its recorded start time,
 * a member already proven in an earlier survey (continuity: a member alive since then kept the group id from
 * being reused), or a member that started after the leader and carries this shell's marker.
 * Caveats: a group id is reserved only while it has members (POSIX setpgid(2)), so a pgid whose
 * number is now led by a newer process is `Recycled`, whatever markers its members carry.
 */
import { markerNamesShell, type MarkerRead } from '../../contract/marker.ts';
import { identityKey, isLive, type ProcessIdentity, type ProcStat } from '../../contract/proc-stat.ts';
import { shellMarker, type Escapee, type ShellGroup } from '../ledger/shell-group.ts';

export type GroupJudgement =
  | { readonly kind: 'Empty' }
  | {
      readonly kind: 'Proven';
      readonly by: 'Continuity' | 'Marker';
      /** Members to re-check right before a signal, best first. */
      readonly witnesses: readonly ProcessIdentity[];
      /** Every live member: all of them are ours, so they become known for the next survey. */
      readonly members: readonly ProcessIdentity[];
    }
  | { readonly kind: 'Recycled'; readonly reason: string; readonly members: readonly ProcessIdentity[] }
  | { readonly kind: 'Unproven'; readonly reason: string; readonly members: readonly ProcessIdentity[] }
  | { readonly kind: 'Protected'; readonly pids: readonly number[] };

export interface GroupFacts {
  readonly group: ShellGroup;
  /** Live processes whose pgrp is the group's id. */
  readonly members: readonly ProcStat[];
  /** Identity keys proven ours in earlier surveys (the leader's from registration). */
  readonly known: ReadonlySet<string>;
  /** Markers read so far for some members (see `markersToRead`). */
  readonly markers: ReadonlyMap<number, MarkerRead>;
  readonly protectedPids: ReadonlySet<number>;
}

const WITNESSES_MAX = 16;
/** How many members' environ a survey reads at most before it gives up proving a group. */
export const MARKER_READS_MAX = 256;

const identityOf = (p: ProcStat): ProcessIdentity => ({ pid: p.pid, startTime: p.startTime });

/**
 * Once one member proves the group, every member is ours and may serve as the witness re-checked before a
 * signal. Stopped members come first: they are the ones still alive after SIGTERM, when SIGCONT must reach
 * them; then the members the proof rests on; then the rest.
 */
function witnessesOf(members: readonly ProcStat[], proof: readonly ProcStat[]): readonly ProcessIdentity[] {
  const stopped = members.filter((m) => m.state === 'T' || m.state === 't');
  const ordered = new Set([...stopped, ...proof, ...members]);
  return [...ordered].slice(0, WITNESSES_MAX).map(identityOf);
}

function decideWithoutMarkers(facts: GroupFacts): GroupJudgement | undefined {
  const { group, members } = facts;
  if (members.length === 0) return { kind: 'Empty' };
  const protectedMembers = members.filter((m) => facts.protectedPids.has(m.pid)).map((m) => m.pid);
  if (protectedMembers.length > 0) return { kind: 'Protected', pids: protectedMembers };
  const identities = members.map(identityOf);
  const numberHolder = members.find((m) => m.pid === group.pgid);
  if (numberHolder !== undefined && numberHolder.startTime !== group.leaderStartTime) {
    return {
      kind: 'Recycled',
      reason: `group id ${group.pgid} is led by a process started at tick ${numberHolder.startTime}, not ${group.leaderStartTime}`,
      members: identities,
    };
  }
  const continuing = members.filter((m) => facts.known.has(identityKey(m)));
  if (continuing.length > 0) {
    return {
      kind: 'Proven',
      by: 'Continuity',
      witnesses: witnessesOf(members, continuing),
      members: identities,
    };
  }
  return undefined;
}

/** Members whose marker the survey must read before `judgeGroup` can decide; empty when it can already. */
export function markersToRead(facts: GroupFacts): readonly number[] {
  if (decideWithoutMarkers(facts) !== undefined) return [];
  return [...facts.members]
    .filter((m) => m.startTime >= facts.group.leaderStartTime && !facts.markers.has(m.pid))
    .sort((a, b) => a.startTime - b.startTime)
    .slice(0, MARKER_READS_MAX)
    .map((m) => m.pid);
}

/** Decides whether the recorded group is still ours, from the facts of one survey. */
export function judgeGroup(facts: GroupFacts): GroupJudgement {
  const early = decideWithoutMarkers(facts);
  if (early !== undefined) return early;
  const { group, members } = facts;
  const identities = members.map(identityOf);
  const own = shellMarker(group);
  const marked = members.filter((m) => {
    const read = facts.markers.get(m.pid);
    return (
      m.startTime >= group.leaderStartTime && read?.kind === 'Marked' && markerNamesShell(read.marker, own)
    );
  });
  if (marked.length > 0) {
    return { kind: 'Proven', by: 'Marker', witnesses: witnessesOf(members, marked), members: identities };
  }
  const foreign = members.find((m) => {
    const read = facts.markers.get(m.pid);
    return read?.kind === 'Marked' && !markerNamesShell(read.marker, own);
  });
  if (foreign !== undefined) {
    return {
      kind: 'Recycled',
      reason: `members of group ${group.pgid} carry another shell's marker (pid ${foreign.pid})`,
      members: identities,
    };
  }
  const unreadable = members.some((m) => facts.markers.get(m.pid)?.kind === 'Unreadable');
  return {
    kind: 'Unproven',
    reason: unreadable
      ? `members of group ${group.pgid} have environments the sidecar may not read`
      : `no member of group ${group.pgid} carries the shell's marker`,
    members: identities,
  };
}

export type EscapeeJudgement =
  | { readonly kind: 'Empty' }
  | { readonly kind: 'Proven'; readonly witnesses: readonly ProcessIdentity[] }
  | { readonly kind: 'Recycled'; readonly reason: string }
  | { readonly kind: 'Protected'; readonly pids: readonly number[] };

/**
 * Is the escapee still the process we found? Its pid and start time prove it; a marker naming another
 * session or turn vetoes (an exec with a new environment); a cleared environment does not.
 */
export function judgeEscapee(
  escapee: Escapee,
  stat: ProcStat | undefined,
  marker: MarkerRead,
  protectedPids: ReadonlySet<number>,
): EscapeeJudgement {
  if (stat === undefined || stat.startTime !== escapee.startTime || !isLive(stat)) return { kind: 'Empty' };
  if (protectedPids.has(stat.pid)) return { kind: 'Protected', pids: [stat.pid] };
  if (
    marker.kind === 'Marked' &&
    (marker.marker.session !== escapee.marker.session || marker.marker.turn !== escapee.marker.turn)
  ) {
    return { kind: 'Recycled', reason: `pid ${stat.pid} now carries another session's marker` };
  }
  return { kind: 'Proven', witnesses: [{ pid: escapee.pid, startTime: escapee.startTime }] };
}

export interface EscapeeScope {
  readonly session: string;
  readonly turns: ReadonlySet<string>;
}

/** Marked processes of the retired session and turns that live outside the retired groups. */
export function findEscapees(
  scope: EscapeeScope,
  processes: readonly { readonly stat: ProcStat; readonly marker: MarkerRead }[],
  groupIds: ReadonlySet<number>,
  protectedPids: ReadonlySet<number>,
): readonly Escapee[] {
  const found: Escapee[] = [];
  for (const { stat, marker } of processes) {
    if (marker.kind !== 'Marked' || groupIds.has(stat.pgrp) || protectedPids.has(stat.pid)) continue;
    if (marker.marker.session !== scope.session || !scope.turns.has(marker.marker.turn)) continue;
    if (!isLive(stat)) continue;
    found.push({ pid: stat.pid, startTime: stat.startTime, marker: marker.marker });
  }
  return found;
}
