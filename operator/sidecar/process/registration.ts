/**
 * Proving a registration against /proc before it is recorded. The request names a group; the sidecar
 * believes it only if the leader is alive, leads that group, started at the given tick, and carries the
 * marker of exactly this session, turn and shell. The leader's parent (the agent host) is protected from
 * signals unless it is itself a marked shell process.
 */
import { markerNamesShell } from '../contract/marker.ts';
import type { ProcessTable } from './os/ports.ts';
import { isLive } from '../contract/proc-stat.ts';
import type { RegisterShellRequest } from '../contract/requests.ts';
import { shellMarker, type ShellGroup } from './ledger/shell-group.ts';

export type Verification =
  { readonly ok: true; readonly group: ShellGroup } | { readonly ok: false; readonly reason: string };

export async function verifyRegistration(
  table: ProcessTable,
  request: RegisterShellRequest,
): Promise<Verification> {
  const { shell, session, turn, pgid, leaderPid, leaderStartTime, match } = request;
  const stat = await table.readStat(leaderPid);
  if (stat === undefined || !isLive(stat))
    return { ok: false, reason: `process ${leaderPid} is not running` };
  if (stat.pgrp !== pgid)
    return { ok: false, reason: `process ${leaderPid} is in group ${stat.pgrp}, not ${pgid}` };
  if (stat.startTime !== leaderStartTime) {
    return {
      ok: false,
      reason: `process ${leaderPid} started at tick ${stat.startTime}, not ${leaderStartTime}`,
    };
  }
  const base: ShellGroup = {
    shell,
    session,
    turn,
    pgid,
    leaderStartTime,
    ...(match === undefined ? {} : { match }),
  };
  const marker = await table.readMarker(leaderPid);
  if (marker.kind === 'Unreadable') {
    return { ok: false, reason: `the environment of process ${leaderPid} is unreadable (${marker.reason})` };
  }
  if (marker.kind !== 'Marked') return { ok: false, reason: `process ${leaderPid} carries no marker` };
  if (!markerNamesShell(marker.marker, shellMarker(base))) {
    return { ok: false, reason: `process ${leaderPid} carries the marker of another session, turn or shell` };
  }
  if (stat.ppid <= 1) return { ok: true, group: base };
  const parent = await table.readMarker(stat.ppid);
  const host = await table.readStat(stat.ppid);
  if (parent.kind === 'Marked' || host === undefined || !isLive(host)) return { ok: true, group: base };
  return { ok: true, group: { ...base, hostPid: host.pid, hostStartTime: host.startTime } };
}
