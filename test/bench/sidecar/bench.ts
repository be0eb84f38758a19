/**
 * Issue 5's figures, with real processes: time from turn-completed to group empty (no trap; trapping
 * SIGTERM = grace + overhead) against the naive leader-only kill, and the cost of one /proc scan at 5,000
 * processes with the event loop's lag, async (ours) against a synchronous scan.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import {
  createReaperClient,
  spawnRegisteredShell,
  type ReaperClient,
} from '../../../operator/sidecar/host/index.ts';
import { loadConfig } from '../../../operator/sidecar/contract/config.ts';
import { isLive, parseProcStat, type ProcStat } from '../../../operator/sidecar/contract/proc-stat.ts';
import { createProcTable } from '../../../operator/sidecar/process/os/proc-table.ts';
import { startSidecar, type SidecarApp } from '../../../operator/sidecar/process/sidecar-app.ts';
import { figure, heading, ms, percentile, ratio } from '../report.ts';

const GRACE_SECONDS = 1;
const RUNS = 10;

function membersOf(pgid: number): ProcStat[] {
  return scanSync().filter((s) => s.pgrp === pgid && isLive(s));
}

function stillAlive(member: ProcStat): boolean {
  try {
    const parsed = parseProcStat(readFileSync(`/proc/${member.pid}/stat`, 'utf8'));
    return parsed.ok && parsed.stat.startTime === member.startTime && isLive(parsed.stat);
  } catch {
    return false; // gone
  }
}

/**
 * Waits until none of the given members lives. It reads only their own stat files and stops at the first
 * live one, so the measuring loop does not starve the sidecar, which shares this event loop.
 */
async function untilEmpty(members: readonly ProcStat[], deadlineMs = 60_000): Promise<number> {
  const started = performance.now();
  let from = 0;
  for (;;) {
    while (from < members.length && !stillAlive(members[from]!)) from += 1;
    if (from === members.length) return performance.now() - started;
    if (performance.now() - started > deadlineMs) throw new Error('the group never emptied');
    await sleep(2);
  }
}

async function untilMembers(pgid: number, count: number): Promise<ProcStat[]> {
  for (let i = 0; i < 3_000; i += 1) {
    const members = membersOf(pgid);
    if (members.length >= count) return members;
    await sleep(10);
  }
  throw new Error(`group ${pgid} never reached ${count} members`);
}

interface Bench {
  readonly app: SidecarApp;
  readonly client: ReaperClient;
  readonly dir: string;
}

async function startBench(): Promise<Bench> {
  const dir = await mkdtemp(join(tmpdir(), 'reaper-bench-'));
  const config = loadConfig({
    SANDBOX_REAPER_SOCKET: join(dir, 'reaper.sock'),
    SANDBOX_REAPER_STATE_DIR: join(dir, 'state'),
    SANDBOX_REAPER_OUTPUT_DIR: dir,
    SANDBOX_REAPER_GRACE_SECONDS: String(GRACE_SECONDS),
    SANDBOX_REAPER_POLL_MS: '500',
  });
  const app = await startSidecar(config, pino({ level: 'silent' }));
  return { app, client: createReaperClient({ socketPath: config.socket }), dir };
}

/** Turn-completed → group empty, through the sidecar's endpoint, over RUNS fresh groups. */
async function retireTimes(bench: Bench, label: string, command: string, members: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const session = `bench-${label}-${i}`;
    const shell = await spawnRegisteredShell({ client: bench.client, session, turn: 't1', command });
    const live = await untilMembers(shell.pid, members);
    const started = performance.now();
    await bench.client.endTurn({ session, turn: 't1', phase: 'Completed', role: 'Subagent' });
    await untilEmpty(live);
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}

/** The naive baseline: SIGTERM the leader only and call it done when the leader exits. */
async function naiveLeaderKill(
  command: string,
  members: number,
): Promise<{ times: number[]; survivors: number }> {
  const times: number[] = [];
  let survivors = 0;
  for (let i = 0; i < RUNS; i += 1) {
    const child: ChildProcess = spawn('/bin/bash', ['-c', command], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    await untilMembers(pid, members);
    const started = performance.now();
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(pid, 'SIGTERM');
    await exited;
    times.push(performance.now() - started);
    survivors += membersOf(pid).length;
    try {
      process.kill(-pid, 'SIGKILL'); // clean up what the naive approach left (the bench's own group)
    } catch {
      // Nothing left.
    }
  }
  return { times: times.sort((a, b) => a - b), survivors };
}

async function turnToEmpty(bench: Bench): Promise<void> {
  heading(`Turn completed → group empty (real processes, ${RUNS} runs each, grace ${GRACE_SECONDS} s)`);
  const plain = await retireTimes(bench, 'plain', 'sleep 1000 & sleep 1000 & wait', 3);
  figure('no trap (3 members): p50', ms(percentile(plain, 50)), `max ${ms(plain.at(-1)!)}`);
  const trapped = await retireTimes(bench, 'trap', "trap '' TERM; sleep 1000 & wait", 2);
  const overhead = trapped.map((t) => t - GRACE_SECONDS * 1000);
  figure(
    'trap SIGTERM: p50 beyond the grace',
    ms(percentile(overhead, 50)),
    `max ${ms(overhead.at(-1)!)}; total p50 ${ms(percentile(trapped, 50))}`,
  );
  const big = await retireTimes(bench, 'big', 'for i in $(seq 1000); do sleep 1000 & done; wait', 1001);
  figure('no trap, 1,001 members: p50', ms(percentile(big, 50)), `max ${ms(big.at(-1)!)}`);
  const naive = await naiveLeaderKill('sleep 1000 & sleep 1000 & wait', 3);
  figure('baseline, leader-only SIGTERM, "done" at leader exit: p50', ms(percentile(naive.times, 50)));
  figure(
    'baseline: members left alive after "done"',
    `${naive.survivors} / ${RUNS * 2}`,
    'ours: 0 (the group is empty)',
  );
  ratio('leader-only speed vs ours (p50), no trap', percentile(plain, 50), percentile(naive.times, 50));
}

function scanSync(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const parsed = parseProcStat(readFileSync(`/proc/${name}/stat`, 'utf8'));
      if (parsed.ok) stats.push(parsed.stat);
    } catch {
      // Ended mid-scan.
    }
  }
  return stats;
}

/** Baseline 2: every read through libuv's threadpool, 64 in flight (the first design of proc-table.ts). */
async function scanThreadpool(): Promise<ProcStat[]> {
  const pids = (await readdir('/proc')).filter((n) => /^\d+$/.test(n));
  const stats: ProcStat[] = [];
  for (let i = 0; i < pids.length; i += 64) {
    const texts = await Promise.all(
      pids.slice(i, i + 64).map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')),
    );
    for (const text of texts) {
      const parsed = parseProcStat(text);
      if (parsed.ok) stats.push(parsed.stat);
    }
  }
  return stats;
}

async function measureScan(
  label: string,
  scan: () => Promise<unknown>,
): Promise<{ p50: number; lagMax: number; lagP99: number }> {
  const times: number[] = [];
  const lag = monitorEventLoopDelay({ resolution: 1 });
  // A 1 ms ticker stands in for /healthz: the loop must keep serving it during a scan.
  const ticker = setInterval(() => undefined, 1);
  lag.enable();
  for (let i = 0; i < RUNS; i += 1) {
    const started = performance.now();
    await scan();
    times.push(performance.now() - started);
    await sleep(5);
  }
  lag.disable();
  clearInterval(ticker);
  times.sort((a, b) => a - b);
  const result = { p50: percentile(times, 50), lagMax: lag.max / 1e6, lagP99: lag.percentile(99) / 1e6 };
  figure(
    `${label}: scan p50`,
    ms(result.p50),
    `event-loop lag p99 ${ms(result.lagP99)}, max ${ms(result.lagMax)}`,
  );
  return result;
}

async function scanAtScale(): Promise<void> {
  const target = 5_000;
  const groups: ChildProcess[] = [];
  for (let i = 0; i < 5; i += 1) {
    groups.push(
      spawn('/bin/bash', ['-c', 'for i in $(seq 1000); do sleep 1000 & done; wait'], {
        detached: true,
        stdio: 'ignore',
      }),
    );
  }
  try {
    for (let i = 0; i < 6_000 && scanSync().length < target; i += 1) await sleep(10);
    const count = scanSync().length;
    heading(`One /proc scan at ${count} processes (${RUNS} scans each)`);
    const table = createProcTable();
    const ours = await measureScan('ours: sync slices of 128, yield between', () => table.scan());
    const sync = await measureScan('baseline: one synchronous pass', () => Promise.resolve(scanSync()));
    const pool = await measureScan('baseline: async via threadpool, 64 in flight', scanThreadpool);
    ratio('event-loop lag p99, one sync pass / ours', sync.lagP99, ours.lagP99);
    ratio('event-loop lag p99, threadpool / ours', pool.lagP99, ours.lagP99);
    ratio('scan time p50, one sync pass / ours', sync.p50, ours.p50);
    ratio('scan time p50, threadpool / ours', pool.p50, ours.p50);
  } finally {
    for (const g of groups) if (g.pid !== undefined) process.kill(-g.pid, 'SIGKILL');
  }
}

export async function sidecarBenchmarks(): Promise<void> {
  const bench = await startBench();
  try {
    await turnToEmpty(bench);
  } finally {
    await bench.app.stop(5_000);
    await rm(bench.dir, { recursive: true, force: true });
  }
  await scanAtScale();
}
