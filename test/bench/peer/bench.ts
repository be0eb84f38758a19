/**
 * `npm run bench -- peer`: issue 13's side-by-side run on one local control plane (kwok nodes) — a raw
 * client doing only the pod creates and deletes, kubernetes-sigs/agent-sandbox built from its Go module,
 * and our operator bundled as the image runs it — for N = 200 and 1,000 sandboxes of one pod each.
 *   BENCH_PEER_N=50            other sizes (comma-separated), for a quick run
 *   BENCH_PEER_SUBJECTS=ours   a subset of raw,agent-sandbox,ours
 *   BENCH_PROFILE=DIR          our operator under --cpu-prof, and a heap snapshot at steady state, into DIR
 *   BENCH_OPERATOR_MAIN=FILE   another operator entry point (e.g. tsc's dist/operator/cli/main.js) instead of the bundle
 *   BENCH_OPERATOR_LOG=FILE    our operator's log, at debug level, appended to FILE (it costs the operator CPU)
 *   BENCH_APISERVER_PROFILE=DIR  kube-apiserver's CPU profile over each subject's delete phase, into DIR,
 *                              for BENCH_APISERVER_PROFILE_SECONDS (default 10), and its top functions
 */
import { buildOperatorBundle } from '../../harness/operator-bundle.ts';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { crdDir } from './crd-dir.ts';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { provisionOperatorIdentity, startLocalCluster } from '@sandbox-operator/local-cluster';
import { clients } from '../controller/cluster.ts';
import { sandboxDeleter } from '../../harness/admission.ts';
import { ensurePeer, PEER_VERSION } from './agent-sandbox.ts';
import { profileApiserver, topFunctions } from './apiserver-profile.ts';
import { summarizeProfile } from './profile.ts';
import { runSubject, type SubjectResult } from './run-subject.ts';
import { agentSandbox, ours, raw, type Subject } from './subjects.ts';
import { printTable } from './table.ts';

const sizes = (process.env['BENCH_PEER_N'] ?? '200,1000').split(',').map(Number);
const wanted = new Set((process.env['BENCH_PEER_SUBJECTS'] ?? 'raw,agent-sandbox,ours').split(','));
const profileDir = process.env['BENCH_PROFILE'] ? resolve(process.env['BENCH_PROFILE']) : null;
const apiserverProfileDir = process.env['BENCH_APISERVER_PROFILE']
  ? resolve(process.env['BENCH_APISERVER_PROFILE'])
  : null;
const apiserverProfileSeconds = Number(process.env['BENCH_APISERVER_PROFILE_SECONDS'] ?? 10);

/** Bundles the operator as the image runs it, outside dist/ (or takes BENCH_OPERATOR_MAIN). */
async function buildOperator(): Promise<string> {
  const given = process.env['BENCH_OPERATOR_MAIN'];
  return given ? resolve(given) : buildOperatorBundle('bench-bundle');
}

/** SIGUSR2 makes node write a heap snapshot into the diagnostic directory; wait until it is complete. */
async function heapSnapshot(signal: (s: NodeJS.Signals) => void, dir: string): Promise<void> {
  const snapshots = async () => (await readdir(dir)).filter((f) => f.endsWith('.heapsnapshot'));
  const before = (await snapshots()).length;
  signal('SIGUSR2');
  for (let waited = 0; waited < 120_000; waited += 500) {
    await delay(500);
    const files = await snapshots();
    if (files.length > before) {
      const file = join(dir, files.sort().at(-1)!);
      const size = (await stat(file)).size;
      await delay(1_000);
      if ((await stat(file)).size === size && size > 0) return;
    }
  }
  console.error('bench: no heap snapshot after 120 s');
}

export async function peerBenchmarks(): Promise<void> {
  const peer = wanted.has('agent-sandbox')
    ? await ensurePeer()
    : ({ ok: false, reason: 'agent-sandbox not selected (BENCH_PEER_SUBJECTS)' } as const);
  const peerNote = peer.ok ? null : peer.reason;
  if (peerNote !== null) console.log(`  ${peerNote}; printing ours and raw only`);
  const main = await buildOperator();
  if (profileDir !== null) await mkdir(profileDir, { recursive: true });
  if (apiserverProfileDir !== null) await mkdir(apiserverProfileDir, { recursive: true });
  const [load1] = loadavg();
  console.log(
    `  machine: ${cpus().length} cores, load average ${load1?.toFixed(1)} at start; ours: ${main}; agent-sandbox ${PEER_VERSION}${profileDir === null ? '' : `; and ours again under the profiler, into ${profileDir}`}`,
  );
  const dir = await crdDir(peer.ok ? [peer.crd] : []);
  const cluster = await startLocalCluster({
    logger: pino({ level: 'warn' }),
    crdDir: dir,
    profiling: apiserverProfileDir !== null,
  });
  try {
    const c = clients(cluster);
    // Ours's Sandboxes are created as the sessions' user (controller/cluster.ts createSandbox): it needs its rights.
    await sandboxDeleter(c.kc);
    // Ours runs as the chart's ServiceAccount with the chart's RBAC, as `npm start` runs it: the admission
    // policies trust it as they trust the Deployment, and the raw client and the peer (admin) stay outside them.
    const operatorKubeconfig = await provisionOperatorIdentity(cluster);
    const subjects: Subject[] = [
      ...(wanted.has('raw') ? [raw] : []),
      ...(peer.ok ? [agentSandbox(peer.binary)] : []),
      ...(wanted.has('ours')
        ? [
            ours({
              main,
              profileDir: null,
              kubeconfig: operatorKubeconfig,
              logFile: process.env['BENCH_OPERATOR_LOG'],
            }),
          ]
        : []),
      // Profiled in a run of its own, so the profiler's overhead stays out of the table's "ours".
      ...(profileDir !== null ? [ours({ main, profileDir, kubeconfig: operatorKubeconfig })] : []),
    ];
    for (const count of sizes) {
      const results: SubjectResult[] = [];
      const apiserverProfiles: [string, string][] = [];
      for (const subject of subjects) {
        const profiled = subject.name === 'ours (profiled)' && profileDir !== null;
        const slug = `${subject.name.replace(/[^a-z0-9]+/g, '-')}-${count}`;
        try {
          results.push(
            await runSubject(cluster, c, subject, count, {
              ...(profiled
                ? { atSteadyState: (pid: number) => heapSnapshot((s) => process.kill(pid, s), profileDir) }
                : {}),
              ...(apiserverProfileDir !== null && !profiled
                ? {
                    // A failed capture is said, and the subject's figures still count.
                    duringDelete: () =>
                      profileApiserver(c.kc, apiserverProfileSeconds, apiserverProfileDir, slug).then(
                        (file) => void apiserverProfiles.push([subject.name, file]),
                        (error: unknown) =>
                          console.error(`bench: no API server profile of ${subject.name}:`, error),
                      ),
                  }
                : {}),
            }),
          );
        } catch (error: unknown) {
          // One subject failing still leaves the others' figures to print.
          console.error(`bench: ${subject.name} at N = ${count} failed:`, error);
          process.exitCode = 1;
        }
      }
      printTable(count, results, peerNote);
      for (const [name, file] of apiserverProfiles)
        console.log(
          `\n  kube-apiserver CPU, first ${apiserverProfileSeconds} s of ${name}'s delete phase (${file}):\n${await topFunctions(file)}`,
        );
      console.log(
        `  load average after N = ${count}: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
    }
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
  if (profileDir !== null) await summarizeProfile(profileDir);
}
