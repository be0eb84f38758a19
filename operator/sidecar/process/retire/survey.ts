/**
 * Surveys: read what the pure judges need from /proc, and nothing more. Markers (environ reads) are read
 * only when continuity cannot prove a group, and the escapee sweep reads them only for processes that
 * started after the retired groups' leaders.
 */
import {
  findEscapees,
  judgeEscapee,
  judgeGroup,
  markersToRead,
  type EscapeeScope,
  type GroupJudgement,
  type EscapeeJudgement,
} from './group-judge.ts';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { MarkerRead } from '../../contract/marker.ts';
import type { ProcessTable } from '../os/ports.ts';
import { isLive, type ProcessIdentity, type ProcStat } from '../../contract/proc-stat.ts';
import type { SignalScope } from './retire-plan.ts';
import type { Escapee, ShellGroup } from '../ledger/shell-group.ts';

const MARKER_BATCH = 64;

/** One /proc scan, indexed for the judges. Zombies are left out: they count as gone. */
export interface Snapshot {
  readonly byGroup: ReadonlyMap<number, readonly ProcStat[]>;
  readonly byPid: ReadonlyMap<number, ProcStat>;
  readonly live: readonly ProcStat[];
}

export function indexSnapshot(stats: readonly ProcStat[]): Snapshot {
  const byGroup = new Map<number, ProcStat[]>();
  const byPid = new Map<number, ProcStat>();
  const live: ProcStat[] = [];
  for (const stat of stats) {
    if (!isLive(stat)) continue;
    live.push(stat);
    byPid.set(stat.pid, stat);
    const members = byGroup.get(stat.pgrp);
    if (members === undefined) byGroup.set(stat.pgrp, [stat]);
    else members.push(stat);
  }
  return { byGroup, byPid, live };
}

async function readMarkers(table: ProcessTable, pids: readonly number[]): Promise<Map<number, MarkerRead>> {
  const markers = new Map<number, MarkerRead>();
  for (let i = 0; i < pids.length; i += MARKER_BATCH) {
    // Yield between batches: a sweep may read thousands of environments (see os/proc-table.ts).
    if (i > 0) await yieldToLoop();
    const batch = pids.slice(i, i + MARKER_BATCH);
    const reads = await Promise.all(batch.map((pid) => table.readMarker(pid)));
    batch.forEach((pid, j) => {
      const read = reads[j];
      if (read !== undefined) markers.set(pid, read);
    });
  }
  return markers;
}

export async function surveyGroup(
  table: ProcessTable,
  snapshot: Snapshot,
  group: ShellGroup,
  known: ReadonlySet<string>,
  protectedPids: ReadonlySet<number>,
): Promise<GroupJudgement> {
  const members = snapshot.byGroup.get(group.pgid) ?? [];
  const facts = { group, members, known, markers: new Map<number, MarkerRead>(), protectedPids };
  const toRead = markersToRead(facts);
  if (toRead.length === 0) return judgeGroup(facts);
  return judgeGroup({ ...facts, markers: await readMarkers(table, toRead) });
}

export async function surveyEscapee(
  table: ProcessTable,
  snapshot: Snapshot,
  escapee: Escapee,
  protectedPids: ReadonlySet<number>,
): Promise<EscapeeJudgement> {
  const stat = snapshot.byPid.get(escapee.pid);
  const marker: MarkerRead = stat === undefined ? { kind: 'Gone' } : await table.readMarker(escapee.pid);
  return judgeEscapee(escapee, stat, marker, protectedPids);
}

/** Marked processes of the scope outside the given groups, started no earlier than `notBefore` ticks. */
export async function sweepEscapees(
  table: ProcessTable,
  snapshot: Snapshot,
  scope: EscapeeScope,
  groupIds: ReadonlySet<number>,
  notBefore: number,
  protectedPids: ReadonlySet<number>,
): Promise<readonly Escapee[]> {
  const candidates = snapshot.live.filter(
    (s) => s.startTime >= notBefore && !groupIds.has(s.pgrp) && !protectedPids.has(s.pid),
  );
  const markers = await readMarkers(
    table,
    candidates.map((s) => s.pid),
  );
  const processes = candidates.map((stat) => ({
    stat,
    marker: markers.get(stat.pid) ?? { kind: 'Gone' as const },
  }));
  return findEscapees(scope, processes, groupIds, protectedPids);
}

/**
 * Re-proves identity immediately before a signal: one witness must still be alive with its recorded start
 * time and inside the scope (its group id, or its own pid), and must not carry another session's or turn's
 * marker. While that member lives, the group id cannot have been handed to anyone else.
 */
export async function proveWitness(
  table: ProcessTable,
  scope: SignalScope,
  witnesses: readonly ProcessIdentity[],
  owner: { readonly session: string; readonly turn: string },
): Promise<ProcessIdentity | undefined> {
  for (const witness of witnesses) {
    const stat = await table.readStat(witness.pid);
    if (stat === undefined || !isLive(stat) || stat.startTime !== witness.startTime) continue;
    if (scope.kind === 'Group' ? stat.pgrp !== scope.pgid : stat.pid !== scope.pid) continue;
    const marker = await table.readMarker(witness.pid);
    if (
      marker.kind === 'Marked' &&
      (marker.marker.session !== owner.session || marker.marker.turn !== owner.turn)
    ) {
      continue;
    }
    return witness;
  }
  return undefined;
}
