/**
 * A simulated process world for unit tests: a ProcessTable and a Signaller over the same fake processes,
 * with the kernel rules the reaper depends on — group signals reach every member, a stopped process acts
 * on SIGTERM only after SIGCONT, a trapping process ignores SIGTERM, SIGKILL ends everything but a D-state
 * process, dead processes linger as zombies until reaped. Every signal is recorded.
 */
import type { Marker, MarkerRead } from '../../../../operator/sidecar/contract/marker.ts';
import type {
  Clock,
  ProcessTable,
  SignalOutcome,
  Signaller,
  RetireSignal,
} from '../../../../operator/sidecar/process/os/ports.ts';
import type { ProcStat } from '../../../../operator/sidecar/contract/proc-stat.ts';
import { guardTarget } from '../../../../operator/sidecar/process/os/signaller.ts';

export interface FakeProcess {
  readonly pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  readonly startTime: number;
  state: 'S' | 'T' | 'D' | 'Z';
  environ: Marker | 'unreadable' | undefined;
  trapsTerm: boolean;
  pendingTerm: boolean;
}

export interface SentSignal {
  readonly kind: 'Group' | 'Process';
  readonly target: number;
  readonly signal: RetireSignal;
  readonly outcome: SignalOutcome['kind'];
}

export interface SpawnOptions {
  readonly pid?: number;
  readonly ppid?: number;
  /** Defaults to the new pid: a detached shell leads its own group and session. */
  readonly pgrp?: number;
  readonly session?: number;
  readonly marker?: Marker | 'unreadable';
  readonly trapsTerm?: boolean;
  readonly state?: 'S' | 'T' | 'D';
}

export class FakeWorld implements ProcessTable, Signaller {
  readonly processes = new Map<number, FakeProcess>();
  readonly sent: SentSignal[] = [];
  readonly #protected = new Set<number>([1]);
  #hosts: ReadonlySet<number> = new Set();
  #nextPid = 1000;
  #tick = 100;
  /** Set to make every signal fail with EPERM (a sidecar without permission). */
  refuseWith: string | undefined;

  constructor(readonly ownPid = 900) {
    this.#protected.add(ownPid);
  }

  spawn(options: SpawnOptions = {}): FakeProcess {
    const pid = options.pid ?? this.#nextPid++;
    this.#tick += 1;
    const p: FakeProcess = {
      pid,
      ppid: options.ppid ?? 500,
      pgrp: options.pgrp ?? pid,
      session: options.session ?? options.pgrp ?? pid,
      startTime: this.#tick,
      state: options.state ?? 'S',
      environ: options.marker,
      trapsTerm: options.trapsTerm ?? false,
      pendingTerm: false,
    };
    this.processes.set(pid, p);
    return p;
  }

  /** A process that exits by itself (a zombie until reaped). */
  exit(pid: number): void {
    const p = this.processes.get(pid);
    if (p !== undefined) p.state = 'Z';
  }

  reapZombies(): void {
    for (const [pid, p] of this.processes) if (p.state === 'Z') this.processes.delete(pid);
  }

  live(pgrp: number): FakeProcess[] {
    return [...this.processes.values()].filter((p) => p.pgrp === pgrp && p.state !== 'Z');
  }

  // ProcessTable
  scan(): Promise<readonly ProcStat[]> {
    return Promise.resolve([...this.processes.values()].map((p) => this.#stat(p)));
  }
  readStat(pid: number): Promise<ProcStat | undefined> {
    const p = this.processes.get(pid);
    return Promise.resolve(p === undefined ? undefined : this.#stat(p));
  }
  readMarker(pid: number): Promise<MarkerRead> {
    const p = this.processes.get(pid);
    if (p === undefined) return Promise.resolve({ kind: 'Gone' });
    if (p.environ === 'unreadable') return Promise.resolve({ kind: 'Unreadable', reason: 'EACCES' });
    if (p.environ === undefined || p.state === 'Z') return Promise.resolve({ kind: 'Unmarked' });
    return Promise.resolve({ kind: 'Marked', marker: p.environ });
  }

  // Signaller
  signalGroup(pgid: number, signal: RetireSignal): SignalOutcome {
    return this.#send(
      'Group',
      pgid,
      signal,
      [...this.processes.values()].filter((p) => p.pgrp === pgid),
    );
  }
  signalProcess(pid: number, signal: RetireSignal): SignalOutcome {
    const p = this.processes.get(pid);
    return this.#send('Process', pid, signal, p === undefined ? [] : [p]);
  }
  protect(pid: number): void {
    this.#protected.add(pid);
  }
  protectHosts(pids: ReadonlySet<number>): void {
    this.#hosts = new Set(pids);
  }
  protectedPids(): ReadonlySet<number> {
    return new Set([...this.#protected, ...this.#hosts]);
  }

  #send(
    kind: 'Group' | 'Process',
    target: number,
    signal: RetireSignal,
    members: FakeProcess[],
  ): SignalOutcome {
    const reason = guardTarget(target, this.protectedPids());
    let outcome: SignalOutcome;
    if (reason !== undefined) outcome = { kind: 'Forbidden', reason };
    else if (members.length === 0) outcome = { kind: 'Gone' };
    else if (this.refuseWith !== undefined) outcome = { kind: 'Refused', code: this.refuseWith };
    else {
      for (const p of members) this.#deliver(p, signal);
      outcome = { kind: 'Delivered' };
    }
    this.sent.push({ kind, target, signal, outcome: outcome.kind });
    return outcome;
  }

  #deliver(p: FakeProcess, signal: RetireSignal): void {
    if (p.state === 'Z') return;
    if (signal === 'SIGKILL') {
      if (p.state !== 'D') p.state = 'Z';
      return;
    }
    if (signal === 'SIGCONT') {
      if (p.state === 'T') p.state = 'S';
      if (p.pendingTerm && !p.trapsTerm) p.state = 'Z';
      p.pendingTerm = false;
      return;
    }
    if (p.trapsTerm || p.state === 'D') return;
    if (p.state === 'T') p.pendingTerm = true;
    else p.state = 'Z';
  }

  #stat(p: FakeProcess): ProcStat {
    return {
      pid: p.pid,
      comm: 'bash',
      state: p.state,
      ppid: p.ppid,
      pgrp: p.pgrp,
      session: p.session,
      startTime: p.startTime,
    };
  }
}

/** Virtual time: `sleep` advances it at once, so retires run to their end without real waiting. */
export class FakeClock implements Clock {
  constructor(public monotonic = 1_000_000) {}
  now(): number {
    return this.monotonic;
  }
  wallNow(): Date {
    return new Date(Date.UTC(2026, 0, 1) + this.monotonic);
  }
  sleep(ms: number): Promise<void> {
    this.monotonic += ms;
    return Promise.resolve();
  }
}
