/**
 * `npm run bench -- claims`: issue 28's figures in one run on one local control plane (kwok nodes make pods
 * Ready): a raw baseline (a label update on a ready pod, observed by a watch), kubernetes-sigs/agent-sandbox's
 * warm pool and claims (its controller with `--extensions`, built by ensurePeer), and ours (the operator as the
 * image runs it), each a pool of N, claims one at a time, then N claims at once.
 *   BENCH_CLAIMS_POOL=100          the pool and burst size N (default 1000; 100 for a quick or CI run)
 *   BENCH_CLAIMS_SEQUENTIAL=20     claims one at a time (default 50)
 *   BENCH_CLAIMS_SUBJECTS=raw,ours a subset of raw,agent-sandbox,ours
 *   BENCH_PROFILE=DIR              ours under --cpu-prof into DIR, summarized at the end (the table says so)
 *   BENCH_OPERATOR_MAIN=FILE       another operator entry point instead of the bundle
 *   BENCH_OPERATOR_LOG=FILE        our operator's log, at debug level, appended to FILE
 *   BENCH_CLAIMS_REAL_NODE=0       without the last rows, claim → first command on the real node (claim-exec)
 *   BENCH_CLAIMS_TRACE=FILE        the API server's audit log on (kept in FILE), ours' one-at-a-time claims as steps,
 *                                  and its /debug/pprof served
 */
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pino } from 'pino';
import {
  OPERATOR_RELEASE,
  provisionOperatorIdentity,
  startLocalCluster,
} from '@sandbox-operator/local-cluster';
import { clients, operatorEntry } from '../controller/cluster.ts';
import { ensurePeer, PEER_VERSION } from '../peer/agent-sandbox.ts';
import { crdDir } from '../peer/crd-dir.ts';
import { summarizeProfile } from '../peer/profile.ts';
import { aheadOfPeer, table, type Outcome } from './figures.ts';
import { BURST_IN_FLIGHT, runClaims, runRaw, type Sizes } from './run.ts';
import { ourClaims, peerClaims } from './subjects.ts';
import { claimExecBenchmarks } from '../real-node/claim-exec.ts';
import { claimSteps, readAudit, TRACE_AUDIT_POLICY, traceTable } from './trace.ts';

/** A positive whole number from the environment, or a clear error naming the variable. */
function count(variable: string, fallback: number, max: number): number {
  const given = process.env[variable];
  if (given === undefined || given === '') return fallback;
  const value = Number(given);
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new Error(`${variable} must be a whole number from 1 to ${max}; got "${given}"`);
  return value;
}

const notRun = (why: string): Outcome => ({ ok: false, failed: false, reason: `not run: ${why}` });
const failed = (error: unknown): Outcome => ({
  ok: false,
  failed: true,
  reason: `failed: ${error instanceof Error ? error.message : String(error)}`,
});

export async function claimsBenchmarks(): Promise<void> {
  const sizes: Sizes = {
    pool: count('BENCH_CLAIMS_POOL', 1000, 10_000),
    sequential: count('BENCH_CLAIMS_SEQUENTIAL', 50, 10_000),
  };
  const wanted = new Set((process.env['BENCH_CLAIMS_SUBJECTS'] ?? 'raw,agent-sandbox,ours').split(','));
  const profileDir = process.env['BENCH_PROFILE'] ? resolve(process.env['BENCH_PROFILE']) : null;
  if (profileDir !== null) await mkdir(profileDir, { recursive: true });

  const peer = wanted.has('agent-sandbox')
    ? await ensurePeer()
    : ({ ok: false, reason: 'not selected (BENCH_CLAIMS_SUBJECTS)' } as const);
  const main = await operatorEntry();
  console.log(
    `  machine: ${cpus().length} cores, load average ${loadavg()[0]?.toFixed(1)} at start; pool and burst ${sizes.pool}, ${sizes.sequential} claims one at a time, ${BURST_IN_FLIGHT} requests in flight in a burst; agent-sandbox ${PEER_VERSION}; ours: ${main}${profileDir === null ? '' : ` under --cpu-prof into ${profileDir}`}`,
  );
  const dir = await crdDir(peer.ok ? [peer.crd, ...peer.extensionCrds] : []);
  const traceFile = process.env['BENCH_CLAIMS_TRACE'] || undefined;
  const trace = traceFile !== undefined;
  const cluster = await startLocalCluster({
    logger: pino({ level: 'warn' }),
    crdDir: dir,
    // Traced, the API server also serves /debug/pprof (a CPU profile of its admission and storage work).
    ...(trace ? { auditPolicy: TRACE_AUDIT_POLICY, profiling: true } : {}),
  });
  try {
    const c = clients(cluster);
    // Ours runs as the chart's ServiceAccount with the chart's RBAC, as `npm start` runs it.
    const operatorKubeconfig = await provisionOperatorIdentity(cluster);
    const raw = wanted.has('raw')
      ? await runRaw(cluster, c, sizes).catch(failed)
      : notRun('not selected (BENCH_CLAIMS_SUBJECTS)');
    const peerOutcome = wanted.has('agent-sandbox')
      ? await runClaims(
          cluster,
          c,
          peerClaims(peer.ok ? peer.binary : null, peer.ok ? '' : peer.reason),
          sizes,
        )
      : notRun('not selected (BENCH_CLAIMS_SUBJECTS)');
    const ours = wanted.has('ours')
      ? await runClaims(
          cluster,
          c,
          ourClaims({
            main,
            profileDir,
            kubeconfig: operatorKubeconfig,
            logFile: process.env['BENCH_OPERATOR_LOG'],
          }),
          sizes,
        )
      : notRun('not selected (BENCH_CLAIMS_SUBJECTS)');
    const subjects = { raw, peer: peerOutcome, ours };
    console.log(
      `\n## Warm pools and claims: a pool of ${sizes.pool}, ${sizes.sequential} claims one at a time, then ${sizes.pool} at once`,
    );
    for (const line of table(sizes.pool, sizes.sequential, subjects)) console.log(line);
    console.log("\n  Issue 28's goals beside the peer, on this run's figures:");
    for (const line of aheadOfPeer(sizes.pool, subjects)) console.log(line);
    console.log(
      `  load average at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    if (traceFile !== undefined && cluster.auditLogPath !== null) {
      await copyFile(cluster.auditLogPath, traceFile);
      await printTrace(traceFile, sizes.sequential);
      const metrics = await cluster.kubectl(['get', '--raw', '/metrics']);
      await writeFile(`${traceFile}.metrics`, metrics.stdout + metrics.stderr);
      printAdmissionCost(metrics.stdout);
    }
    if (Object.values(subjects).some((o) => !o.ok && o.failed)) process.exitCode = 1;
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
  if (profileDir !== null) await summarizeProfile(profileDir);
  // The real node's row, on a control plane of its own (the kwok one is stopped): one run prints them all.
  if (process.env['BENCH_CLAIMS_REAL_NODE'] !== '0') await claimExecBenchmarks();
}

/** Ours' one-at-a-time claims as the API server saw them (BENCH_CLAIMS_TRACE=1). */
async function printTrace(auditLog: string, sequential: number): Promise<void> {
  const events = await readAudit(auditLog);
  const namespace = events.find((e) => e.objectRef?.namespace?.startsWith('claims-ours-'))?.objectRef
    ?.namespace;
  if (namespace === undefined) return console.log('\n  trace: no request of ours in the audit log');
  const claims = Array.from({ length: sequential }, (_, i) => `one-${String(i).padStart(4, '0')}`);
  const operatorUser = `system:serviceaccount:${OPERATOR_RELEASE.namespace}:${OPERATOR_RELEASE.name}`;
  const steps = claimSteps(events, namespace, claims, (user) => user === operatorUser);
  console.log(`\n## Where a one-at-a-time claim's time goes (ours, the API server's audit log, ${auditLog})`);
  for (const line of traceTable(steps)) console.log(line);
}

/** Admission's time over the whole run, by admission controller and operation (the API server's metrics). */
function printAdmissionCost(metrics: string): void {
  const sums = new Map<string, { seconds: number; count: number }>();
  const pattern =
    /^apiserver_admission_controller_admission_duration_seconds_(sum|count)\{name="([^"]+)",operation="([^"]+)".*\} (\S+)$/;
  for (const line of metrics.split('\n')) {
    const match = pattern.exec(line);
    if (match === null) continue;
    const [, kind, name = '', operation = '', value = '0'] = match;
    const key = `${name} ${operation}`;
    const entry = sums.get(key) ?? { seconds: 0, count: 0 };
    if (kind === 'sum') entry.seconds += Number(value);
    else entry.count += Number(value);
    sums.set(key, entry);
  }
  console.log('\n  Admission over the run (all subjects), by admission controller and operation:');
  for (const [key, { seconds, count }] of [...sums].sort((a, b) => b[1].seconds - a[1].seconds).slice(0, 10))
    console.log(
      `  ${key}: ${(seconds * 1000).toFixed(0)} ms over ${count} requests (${((seconds * 1e6) / Math.max(1, count)).toFixed(0)} µs each)`,
    );
}
