/**
 * `npm run bench -- reaper-pod`: the shell reaper inside a real sandbox pod (issue 12), on the local
 * control plane's real node, in SameUser mode (agent and sidecar as uid 1000), grace 1 s.
 *
 * - turn completed → shell groups gone, p50/p99 of RUNS turns each, for a plain shell (bash and two
 *   sleeps), a shell whose group ignores SIGTERM (SIGKILL after the grace; "beyond the grace" is the
 *   reaper's own cost), and a 100-member group. From the bench's status.turn write (what an agent host
 *   does) until no member is alive on the host (zombies count as gone): the watch, the fence, the signals.
 * - one sweep at 1,000 processes in the pod: run in the sidecar's own container with its own code (the
 *   /proc scan and the escapee sweep of retire-driver.ts), against the idle pod as the baseline.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION, GROUP, SANDBOX, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import { cacheRoot, startLocalCluster, type LocalCluster } from '@sandbox-operator/local-cluster';
import { operatorImageOnNode } from '@sandbox-operator/local-cluster/images/on-node';
import { isLive, parseProcStat } from '../../../operator/sidecar/contract/proc-stat.ts';
import { allowAdmin, AS_USER, clients, startOperator, waitFor } from '../controller/cluster.ts';
import { figure, heading, ms, percentile, ratio } from '../report.ts';
import { execScriptArgs, podScript } from '../../harness/pod-script.ts';
import { sweepScript } from './reaper-pod-sweep.ts';

const RUNS = 10;
const POD = 'bench-0';
const SESSION = 'bench-child';

type Kubectl = LocalCluster['kubectl'];

async function ok(kubectl: Kubectl, args: readonly string[], input?: string): Promise<string> {
  const result = await kubectl(args, input === undefined ? {} : { input });
  if (result.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** The host pids whose command line names `token` (each shell's sleeps carry a unique duration). */
function hostPids(token: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(token))
        pids.push(Number(entry));
    } catch {
      // ended while we looked
    }
  }
  return pids;
}

const alive = (pid: number): boolean => {
  try {
    const parsed = parseProcStat(readFileSync(`/proc/${String(pid)}/stat`, 'utf8'));
    return parsed.ok && isLive(parsed.stat);
  } catch {
    return false;
  }
};

async function setup(cluster: LocalCluster, namespace: string, image: string): Promise<void> {
  const k: Kubectl = (args, options) => cluster.kubectl(args, options);
  await ok(k, ['create', 'namespace', namespace]);
  await ok(k, ['create', 'serviceaccount', 'sandbox-shell-reaper', '-n', namespace]);
  const rules = [
    ['shell-reaper', '--verb=list,watch', '--resource=sessionreferences.sandbox.agents.dev'],
    ['shell-reaper-status', '--verb=patch', '--resource=sessionreferences.sandbox.agents.dev/status'],
    ['shell-reaper-events', '--verb=create', '--resource=events'],
  ] as const;
  for (const [name, ...rule] of rules) {
    await ok(k, ['create', 'role', name, '-n', namespace, ...rule]);
    await ok(k, [
      'create',
      'rolebinding',
      name,
      '-n',
      namespace,
      `--role=${name}`,
      `--serviceaccount=${namespace}:sandbox-shell-reaper`,
    ]);
  }
  const reference = {
    apiVersion: API_VERSION,
    kind: SESSION_REFERENCE.kind,
    metadata: { name: 'child', namespace },
    spec: {
      sandbox: 'bench',
      session: SESSION,
      worktree: 'wt',
      route: 'r/bench',
      role: 'Subagent',
      parentSession: 'bench-parent',
    },
  };
  await ok(k, ['apply', AS_USER, '-f', '-'], JSON.stringify(reference));
  const sandbox = {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: SANDBOX.kind,
    metadata: { name: 'bench', namespace },
    spec: {
      worktree: 'wt',
      podTemplate: {
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': '127.0.0.1' },
          securityContext: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true },
          containers: [
            {
              name: 'agent',
              image,
              imagePullPolicy: 'IfNotPresent',
              command: ['node', '-e', 'setInterval(() => {}, 1 << 30)'],
            },
          ],
        },
      },
      shellReaper: { enabled: true, gracePeriodSeconds: 1 },
    },
  };
  await ok(k, ['apply', '-f', '-'], JSON.stringify(sandbox));
  await waitFor(
    'the bench pod',
    async () => (await k(['get', 'pod', POD, '-n', namespace])).exitCode === 0,
    120_000,
  );
  await ok(k, ['wait', '--for=condition=Ready', `pod/${POD}`, '-n', namespace, '--timeout=300s']);
  await waitFor(
    'the sidecar ready',
    async () =>
      (await ok(k, ['logs', '-n', namespace, POD, '-c', 'shell-reaper'])).includes('shell reaper ready'),
    60_000,
  );
}

/** Runs `lines` (importing our modules as ./operator/...ts) as one bundled module in `container`. */
async function inContainer(
  k: Kubectl,
  namespace: string,
  container: string,
  lines: readonly string[],
): Promise<string> {
  return ok(k, execScriptArgs(namespace, POD, container), await podScript(lines));
}

const writeTurn = (k: Kubectl, namespace: string, turn: object) =>
  ok(k, [
    'patch',
    AS_USER,
    'sessionreference',
    'child',
    '-n',
    namespace,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { turn } }),
  ]);

/** Registers a shell for `turn` from the agent container, as a host there would (the turn is Running first). */
async function startShell(k: Kubectl, namespace: string, turn: string, command: string): Promise<void> {
  await writeTurn(k, namespace, { id: turn, phase: 'Running', origin: 'ParentMessage' });
  const out = await inContainer(k, namespace, 'agent', [
    "import { createReaperClient, spawnRegisteredShell } from './operator/sidecar/host/index.ts';",
    'const client = createReaperClient({ socketPath: process.env.SANDBOX_REAPER_SOCKET });',
    `const shell = await spawnRegisteredShell({ client, session: ${JSON.stringify(SESSION)}, turn: ${JSON.stringify(turn)}, command: ${JSON.stringify(command)} });`,
    'console.log(shell.registration.kind); process.exit(0);',
  ]);
  if (out.trim() !== 'Registered') throw new Error(`registration of ${turn}: ${out}`);
}

interface Shape {
  readonly label: string;
  readonly command: (token: string) => string;
  /** Live processes of the group once it is up: the leader and its children. */
  readonly members: number;
}

const SHAPES: readonly Shape[] = [
  { label: 'plain shell (bash + 2 sleeps)', command: (t) => `${t} & ${t} & wait`, members: 3 },
  {
    label: 'shell ignoring SIGTERM (bash + 1 sleep)',
    command: (t) => `trap '' TERM; ${t} & wait`,
    members: 2,
  },
  { label: '100-member group', command: (t) => `for i in $(seq 100); do ${t} & done; wait`, members: 101 },
];

async function turnToGone(k: Kubectl, namespace: string, shape: Shape, base: number): Promise<number[]> {
  const spans: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const token = `sleep ${String(base + run)}`;
    const turn = `t${String(base + run)}`;
    await startShell(k, namespace, turn, shape.command(token));
    let pids: number[] = [];
    await waitFor(
      `${shape.label}: members up`,
      () => {
        pids = hostPids(token);
        return Promise.resolve(pids.length >= shape.members);
      },
      60_000,
    );
    const started = performance.now();
    await writeTurn(k, namespace, { id: turn, phase: 'Completed', origin: 'ParentMessage' });
    for (;;) {
      pids = pids.filter(alive);
      if (pids.length === 0) break;
      if (performance.now() - started > 60_000) throw new Error(`${shape.label}: the group never emptied`);
      await sleep(2);
    }
    spans.push(performance.now() - started);
  }
  return spans.sort((a, b) => a - b);
}

type SweepFigures = { scan: number[]; retireSweep: number[]; markedSweep: number[]; processes: number };

async function sweep(k: Kubectl, namespace: string, turn: string): Promise<SweepFigures> {
  return JSON.parse(
    await inContainer(k, namespace, 'shell-reaper', sweepScript(SESSION, turn, RUNS)),
  ) as SweepFigures;
}

export async function reaperPodBenchmarks(): Promise<void> {
  const cluster = await startLocalCluster({ realNode: { taint: false } });
  try {
    if (cluster.realNode === null) {
      console.log(`  (skipped: no real node: ${cluster.realNodeSkipReason ?? ''})`);
      return;
    }
    await allowAdmin(clients(cluster));
    const image = await operatorImageOnNode(cacheRoot(), cluster.realNode.containerdSocket, () => undefined);
    const namespace = `bench-reaper-${Date.now().toString(36)}`;
    const operator = await startOperator(cluster, namespace, 2, ['--sidecar-image', image]);
    try {
      await setup(cluster, namespace, image);
      const k: Kubectl = (args, options) => cluster.kubectl(args, options);
      heading(
        `Turn completed (status.turn) → shell group gone, in a real pod (SameUser, grace 1 s, ${RUNS} turns each)`,
      );
      let base = 50_000;
      for (const shape of SHAPES) {
        const spans = await turnToGone(k, namespace, shape, base);
        base += 1_000;
        figure(`${shape.label} p50`, ms(percentile(spans, 50)));
        figure(`${shape.label} p99`, ms(percentile(spans, 99)));
        if (shape.label.includes('SIGTERM'))
          figure(
            '  beyond the 1 s grace, p50 / p99',
            `${ms(percentile(spans, 50) - 1000)} / ${ms(percentile(spans, 99) - 1000)}`,
          );
      }
      const idle = await sweep(k, namespace, 'sweep');
      const token = `sleep ${String(base)}`;
      await startShell(k, namespace, 'sweep', `for i in $(seq 1000); do ${token} & done; wait`);
      await waitFor('1,000 members up', () => Promise.resolve(hostPids(token).length >= 1001), 120_000);
      const busy = await sweep(k, namespace, 'sweep');
      heading(`One sweep in the pod, in the sidecar's container (${RUNS} each)`);
      for (const [label, at] of [
        ['idle pod', idle],
        ['1,000-member group', busy],
      ] as const) {
        figure(`${label}: /proc scan (${String(at.processes)} processes) p50`, ms(percentile(at.scan, 50)));
        figure(`${label}: retire sweep (group excluded) p50`, ms(percentile(at.retireSweep, 50)));
        figure(`${label}: sweep reading every marker p50`, ms(percentile(at.markedSweep, 50)));
      }
      ratio(
        'retire sweep, 1,000 processes / idle',
        percentile(busy.retireSweep, 50),
        percentile(idle.retireSweep, 50),
      );
      ratio(
        'every marker read / retire sweep, at 1,000',
        percentile(busy.markedSweep, 50),
        percentile(busy.retireSweep, 50),
      );
      await writeTurn(k, namespace, { id: 'sweep', phase: 'Completed', origin: 'ParentMessage' });
    } finally {
      await operator.stop();
    }
  } finally {
    await cluster.stop();
  }
}
