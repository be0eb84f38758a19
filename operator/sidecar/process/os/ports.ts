/**
 * The sidecar's operating-system I/O, behind small ports; their real adapters sit beside this file (they
 * read /proc, call kill(2), append to a file and read the monotonic clock), and unit tests pass fakes.
 * Each port has at most four methods. The other ports sit beside their adapters too: the retire reporter
 * in kube/ports.ts, the notice outbox in notices/notice-outbox.ts.
 */
import type { MarkerRead } from '../../contract/marker.ts';
import type { ProcStat } from '../../contract/proc-stat.ts';

/** The pod's shared PID namespace as /proc shows it. */
export interface ProcessTable {
  /** Every process's stat. Entries that vanish (ENOENT) or fail to parse mid-scan are skipped. */
  scan(): Promise<readonly ProcStat[]>;
  /** One process's stat, or undefined when it is gone or unreadable. */
  readStat(pid: number): Promise<ProcStat | undefined>;
  /** One process's marker, from the environment it was exec'd with. */
  readMarker(pid: number): Promise<MarkerRead>;
}

/** The only signals the sidecar sends: a retire's TERM, CONT and KILL (each safe to send twice). */
export type RetireSignal = 'SIGTERM' | 'SIGCONT' | 'SIGKILL';

export type SignalOutcome =
  | { readonly kind: 'Delivered' }
  /** ESRCH: no such process or group. Never a reason to fall back to another target. */
  | { readonly kind: 'Gone' }
  /** EPERM (or another errno): no member could be signalled. */
  | { readonly kind: 'Refused'; readonly code: string }
  /** The guard refused before kill(2): 0, -1, 1, the sidecar, its group, or a protected pid. */
  | { readonly kind: 'Forbidden'; readonly reason: string };

/** The only place a signal is sent. Every call passes the guard first. */
export interface Signaller {
  signalGroup(pgid: number, signal: RetireSignal): SignalOutcome;
  signalProcess(pid: number, signal: RetireSignal): SignalOutcome;
  /** Adds a pid the guard refuses for good (tests, and pids the sidecar knows at start). */
  protect(pid: number): void;
  /**
   * Replaces the agent hosts the guard refuses: the live hosts of registered shells, proven by identity.
   * A host whose shells are all forgotten, or whose pid now names another process, is no longer refused.
   */
  protectHosts(pids: ReadonlySet<number>): void;
  /** The pids the guard refuses: its own pid and group, PID 1, every protected pid and the current hosts. */
  protectedPids(): ReadonlySet<number>;
}

/** An append-only journal, replayed at start. */
export interface Journal<E> {
  /** Appends one entry durably (fsync) before it resolves. */
  append(entry: E): Promise<void>;
  /** Every intact entry in order; a torn or foreign line is skipped and counted, never fatal. */
  replay(): Promise<{ readonly entries: readonly E[]; readonly skipped: number }>;
  /** Atomically replaces the journal with a compacted equivalent. */
  rewrite(entries: readonly E[]): Promise<void>;
  /** Entries appended since the last rewrite (or start): the reaper compacts when it grows too large. */
  appendsSinceRewrite(): number;
}

/** Monotonic time shared by every process on the node (CLOCK_MONOTONIC), so it survives a restart. */
export interface Clock {
  /** Milliseconds on the monotonic clock: immune to NTP steps and wall-clock jumps. */
  now(): number;
  /** Wall time, for records people read. */
  wallNow(): Date;
  sleep(ms: number): Promise<void>;
}
