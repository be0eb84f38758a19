/**
 * Which agent hosts the signaller refuses (issue 12: no pid is protected for good). A host is the unmarked
 * parent of a registered shell's leader, recorded with its start time. It is protected only while
 *
 * - some shell still in the ledger names it (a retired shell's host is released with it),
 * - its pid still names that process (same start time): a recycled pid is an ordinary process again, and
 * - it is not inside a registered shell (its group or session is no shell's group): otherwise a shell could
 *   make itself, and so its whole group, unkillable by registering a child.
 */
import type { ProcStat } from '../../contract/proc-stat.ts';
import { isLive } from '../../contract/proc-stat.ts';
import type { ProcessTable, Signaller } from '../os/ports.ts';
import type { ShellGroup } from '../ledger/shell-group.ts';
import type { Ledger } from '../ledger/shell-ledger.ts';

export interface HostCandidate {
  readonly pid: number;
  /** Undefined for shells journaled before start times were recorded: protected while alive. */
  readonly startTime: number | undefined;
}

/** The hosts the registered shells name, once each. */
export function hostCandidates(groups: Iterable<ShellGroup>): HostCandidate[] {
  const byPid = new Map<number, HostCandidate>();
  for (const g of groups) {
    if (g.hostPid === undefined) continue;
    byPid.set(g.hostPid, { pid: g.hostPid, startTime: g.hostStartTime });
  }
  return [...byPid.values()];
}

/** The pids to protect now, from the hosts' current stats (undefined when a host is gone). */
export function protectedHosts(
  candidates: readonly HostCandidate[],
  statOf: ReadonlyMap<number, ProcStat | undefined>,
  shellGroups: ReadonlySet<number>,
): Set<number> {
  const pids = new Set<number>();
  for (const host of candidates) {
    const stat = statOf.get(host.pid);
    if (stat === undefined || !isLive(stat)) continue;
    if (host.startTime !== undefined && stat.startTime !== host.startTime) continue;
    if (shellGroups.has(stat.pgrp) || shellGroups.has(stat.session)) continue;
    pids.add(host.pid);
  }
  return pids;
}

/** Reads the hosts' stats and hands the signaller exactly the hosts to protect now. */
export async function syncProtectedHosts(
  table: Pick<ProcessTable, 'readStat'>,
  signaller: Pick<Signaller, 'protectHosts'>,
  shells: readonly ShellGroup[],
): Promise<void> {
  const candidates = hostCandidates(shells);
  const stats = new Map(
    await Promise.all(candidates.map(async (c) => [c.pid, await table.readStat(c.pid)] as const)),
  );
  signaller.protectHosts(protectedHosts(candidates, stats, new Set(shells.map((g) => g.pgid))));
}

/** Protects exactly the live, proven hosts of the shells in the ledger (the reaper and the retire driver). */
export function protectLedgerHosts(
  table: Pick<ProcessTable, 'readStat'>,
  signaller: Pick<Signaller, 'protectHosts'>,
  ledger: Pick<Ledger, 'shells'>,
): Promise<void> {
  return syncProtectedHosts(
    table,
    signaller,
    [...ledger.shells.values()].map((record) => record.group),
  );
}
