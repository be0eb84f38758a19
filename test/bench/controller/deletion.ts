/**
 * Issue 4's deletion figures on the local control plane (kwok runs the pods): 1,000 sandboxes with 2 pods and
 * 5 references each, deleted at once, with 1 worker and with 8 in the same run — deletions per second, p50/p99
 * from delete to pods gone — and the API requests per decision from the apiserver's own metrics, for 5 and
 * for 50 references per sandbox (no per-session request: the count does not grow with the references).
 */
import { sandboxDeleter } from '../../harness/admission.ts';
import { availableParallelism } from 'node:os';
import { LABELS } from '../../../operator/api/names.ts';
import type { LocalCluster } from '@sandbox-operator/local-cluster';
import { figure, heading, ms, percentile, ratio } from '../report.ts';
import { cpuMs } from '../peer/measure.ts';
import { freePort, queueSettled } from './probe.ts';
import {
  allowAdmin,
  apiserverRequests,
  clients,
  createMany,
  createReference,
  createSandbox,
  referenceBody,
  requestDelta,
  sandboxBody,
  startOperator,
  waitFor,
  type Clients,
} from './cluster.ts';

const SANDBOXES = Number(process.env['BENCH_SANDBOXES'] ?? 1000);
const cores = availableParallelism();

export type RunResult = {
  wallMs: number;
  latencies: number[];
  requests: Map<string, number>;
  /** CPU ms of each process from the first delete to the last pod gone: where the bound is. */
  cpu: Map<string, number>;
};

/** CPU so far of the operator and of each control-plane process. */
function cpuSnapshot(cluster: LocalCluster, operatorPid: number | undefined): Map<string, number> {
  const pids = {
    ...cluster.pids(),
    bench: process.pid,
    ...(operatorPid === undefined ? {} : { operator: operatorPid }),
  };
  return new Map(Object.entries(pids).map(([name, pid]): [string, number] => [name, cpuMs(pid)]));
}

async function countPods(c: Clients, namespace: string): Promise<Map<string, number>> {
  const pods = (await c.core.listNamespacedPod({ namespace, labelSelector: LABELS.sandbox })).items;
  const bySandbox = new Map<string, number>();
  for (const pod of pods) {
    const sandbox = pod.metadata?.labels?.[LABELS.sandbox] ?? '';
    bySandbox.set(sandbox, (bySandbox.get(sandbox) ?? 0) + 1);
  }
  return bySandbox;
}

export type RunOptions = {
  /** Pods per sandbox (default 2). */
  readonly replicas?: number;
  /** The measured operator's kubeconfig (default: straight to the API server). */
  readonly kubeconfigPath?: string;
};

export async function run(
  cluster: LocalCluster,
  c: Clients,
  workers: number,
  count: number,
  refsPerSandbox: number,
  { replicas = 2, kubeconfigPath }: RunOptions = {},
): Promise<RunResult> {
  const namespace = `bench-w${workers}-r${refsPerSandbox}-${Date.now().toString(36)}`;
  await c.core.createNamespace({ body: { metadata: { name: namespace } } });
  const names = Array.from({ length: count }, (_, i) => `sbx-${String(i).padStart(4, '0')}`);
  // Setup runs under an 8-worker operator; the measured operator starts on a settled namespace.
  const setup = await startOperator(cluster, namespace, 8);
  const setupStarted = Date.now();
  try {
    await createMany(names, (name) => createSandbox(c, sandboxBody(namespace, name, replicas)));
    await createMany(
      names.flatMap((name) =>
        Array.from({ length: refsPerSandbox }, (_, i) => referenceBody(namespace, name, i, 'wt-1')),
      ),
      (body) => createReference(c, body),
    );
    await waitFor(
      'all pods running',
      async () => {
        const pods = (await c.core.listNamespacedPod({ namespace, labelSelector: LABELS.sandbox })).items;
        return pods.length === count * replicas && pods.every((pod) => pod.status?.phase === 'Running');
      },
      1_800_000,
    );
  } finally {
    await setup.stop();
  }
  figure(`setup: ${count} sandboxes, ${count * replicas} pods running`, ms(Date.now() - setupStarted));
  const port = await freePort();
  const operator = await startOperator(cluster, namespace, workers, ['--probe-bind', `127.0.0.1:${port}`], {
    kubeconfigPath,
  });
  try {
    await waitFor('the measured operator settled', async () => await queueSettled(port), 600_000);
    const before = await apiserverRequests(cluster);
    const deletedAt = new Map<string, number>();
    const goneAt = new Map<string, number>();
    const started = Date.now();
    const cpuBefore = cpuSnapshot(cluster, operator.child.pid);
    let benchPodLists = 0;
    const polling = (async () => {
      while (goneAt.size < count) {
        benchPodLists += 1;
        const remaining = await countPods(c, namespace);
        const now = Date.now();
        for (const name of names)
          if (!goneAt.has(name) && deletedAt.has(name) && !remaining.has(name)) goneAt.set(name, now);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    // As a user deletes: admin is the operator here, and may delete only what its cleanup fenced.
    const deleter = await sandboxDeleter(c.kc);
    await createMany(names, async (name) => {
      await deleter.deleteNamespacedCustomObject({
        group: 'sandbox.agents.dev',
        version: 'v1alpha1',
        namespace,
        plural: 'sandboxes',
        name,
      });
      deletedAt.set(name, Date.now());
    });
    await polling;
    const wallMs = Math.max(...goneAt.values()) - started;
    const cpu = new Map(
      [...cpuSnapshot(cluster, operator.child.pid)].map(([name, now]): [string, number] => [
        name,
        now - (cpuBefore.get(name) ?? now),
      ]),
    );
    // Requests are counted until every Sandbox is released (its finalizer goes after its pods), minus the
    // bench's own: its DELETEs of the Sandboxes and its LISTs of pods while polling.
    let benchSandboxLists = 0;
    await waitFor(
      'every sandbox released',
      async () => {
        benchSandboxLists += 1;
        const list = (await c.custom.listNamespacedCustomObject({
          group: 'sandbox.agents.dev',
          version: 'v1alpha1',
          namespace,
          plural: 'sandboxes',
        })) as { items: unknown[] };
        return list.items.length === 0;
      },
      600_000,
    );
    const requests = requestDelta(before, await apiserverRequests(cluster));
    subtract(requests, 'DELETE sandboxes', count);
    subtract(requests, 'LIST pods', benchPodLists);
    subtract(requests, 'LIST sandboxes', benchSandboxLists);
    const latencies = names
      .map((name) => (goneAt.get(name) ?? 0) - (deletedAt.get(name) ?? 0))
      .sort((a, b) => a - b);
    return { wallMs, latencies, requests, cpu };
  } finally {
    await operator.stop();
  }
}

function subtract(requests: Map<string, number>, key: string, own: number): void {
  const left = (requests.get(key) ?? 0) - own;
  if (left > 0) requests.set(key, left);
  else requests.delete(key);
}

export function report(label: string, count: number, result: RunResult): void {
  figure(
    `${label}: all ${count} deleted, wall time`,
    ms(result.wallMs),
    `${((count / result.wallMs) * 1000).toFixed(1)} deletions/s`,
  );
  figure(
    `${label}: delete -> pods gone, p50 / p99`,
    `${ms(percentile(result.latencies, 50))} / ${ms(percentile(result.latencies, 99))}`,
  );
  const busy = [...result.cpu].sort(([, a], [, b]) => b - a);
  const total = busy.reduce((sum, [, value]) => sum + value, 0);
  figure(
    `${label}: CPU while deleting, of ${String(cores)} cores`,
    `${((total / (result.wallMs * cores)) * 100).toFixed(0)} %`,
    busy.map(([name, value]) => `${name} ${(value / 1000).toFixed(1)} s`).join(', '),
  );
}

function requestsPerDecision(label: string, count: number, requests: Map<string, number>): void {
  const interesting = [...requests]
    .filter(([key]) => /sessionreferences|sandboxes|pods|events/.test(key))
    .sort(([a], [b]) => a.localeCompare(b));
  figure(
    `${label}: API requests per deleted sandbox`,
    '',
    "(apiserver_request_total delta / sandboxes, the bench's own removed; includes kwok)",
  );
  for (const [key, value] of interesting) figure(`    ${key}`, (value / count).toFixed(2));
}

export async function deletionBenchmarks(cluster: LocalCluster): Promise<void> {
  const c = clients(cluster);
  await allowAdmin(c);
  heading(`Deleting ${SANDBOXES} sandboxes at once (2 pods, 5 references each; kwok pods)`);
  const one = await run(cluster, c, 1, SANDBOXES, 5);
  report('1 worker ', SANDBOXES, one);
  const eight = await run(cluster, c, 8, SANDBOXES, 5);
  report('8 workers', SANDBOXES, eight);
  ratio('8 workers vs 1: wall time', one.wallMs, eight.wallMs);
  requestsPerDecision('5 references', SANDBOXES, eight.requests);

  // BENCH_SKIP_FIFTY_REFERENCES=1: the per-session check only says again that requests do not grow.
  if (process.env['BENCH_SKIP_FIFTY_REFERENCES'] === '1') return;
  const few = Math.min(200, SANDBOXES);
  heading(`Per-session requests: ${few} sandboxes with 50 references each (vs 5 above)`);
  const fifty = await run(cluster, c, 8, few, 50);
  report('8 workers, 50 refs', few, fifty);
  requestsPerDecision('50 references', few, fifty.requests);
  figure(
    'GET sessionreferences during decisions (per-session lookups)',
    String(
      (fifty.requests.get('get sessionreferences') ?? 0) + (eight.requests.get('get sessionreferences') ?? 0),
    ),
  );
}
