/**
 * The sidecar's I/O, behind small ports. The real ones read /proc, call kill(2), append to a file and read
 * the monotonic clock; unit tests pass fakes. Each port has at most four methods.
 */
import type { MarkerRead } from '../../contract/marker.ts';
import type { ProcStat } from '../../contract/proc-stat.ts';
import type { Notice, NoticePage } from '../../contract/notice.ts';
import type { RetireSignal } from '../retire/retire-plan.ts';

/** The pod's shared PID namespace as /proc shows it. */
export interface ProcessTable {
  /** Every process's stat. Entries that vanish (ENOENT) or fail to parse mid-scan are skipped. */
  scan(): Promise<readonly ProcStat[]>;
  /** One process's stat, or undefined when it is gone or unreadable. */
  readStat(pid: number): Promise<ProcStat | undefined>;
  /** One process's marker, from the environment it was exec'd with. */
  readMarker(pid: number): Promise<MarkerRead>;
}

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

/** Where a finished (or failed) retire is recorded besides the log: SessionReference status and an Event. */
export interface RetireReporter {
  reportRetired(report: RetireReport): Promise<void>;
  reportFailure(failure: RetireFailure): Promise<void>;
}

export interface RetireSummary {
  readonly retiredGroups: number;
  /** Groups that needed SIGKILL. */
  readonly killedGroups: number;
  readonly escapees: number;
  /** Processes found but not ended: permission, protected, unprovable, or outliving SIGKILL. */
  readonly unreachable: number;
  readonly unreachablePids: readonly number[];
  readonly message: string;
}

export interface RetireReport {
  readonly session: string;
  readonly turn: string;
  readonly summary: RetireSummary;
  readonly finishedAt: string;
}

export interface RetireFailure {
  readonly session: string;
  readonly turn: string;
  readonly message: string;
}

/** A notice before the outbox numbers it. */
export type NewNotice = Omit<Notice, 'seq'>;

export type { NoticePage };

/**
 * The host's notice channel (exit and match notices). Retiring a shell drops its notices first, and the
 * fence keeps new ones from being published, so a retired shell never reopens a finished subagent.
 */
export interface NoticeOutbox {
  publish(notice: NewNotice): Promise<Notice>;
  /** Drops every unacknowledged notice of these shells (durably), returning how many there were. */
  dropShells(shells: readonly string[]): Promise<number>;
  /** Acknowledges notices up to `after`, then returns due ones after it, waiting up to `waitMs` for one. */
  read(after: number, waitMs: number, abort: AbortSignal): Promise<NoticePage>;
}
