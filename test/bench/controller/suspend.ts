/**
 * `npm run bench -- suspend` (issue 27, "Suspend and resume"): N sandboxes (BENCH_SUSPEND_N, default 50) with
 * a persistent workspace, on a kwok node, under our operator bundled as the image runs it. All are suspended
 * at once (`spec.operatingMode: Suspended`), timed per sandbox until its pod is gone; then all resumed, timed
 * per sandbox until it is Ready again (Ready True for its new generation: pod running on the same claims).
 * Beside them, in the same run on the same node: N bare pods deleted at once (until gone) and created at once
 * (until Running), which is what a suspend and a resume cost at the least. p50 and p99 of each.
 *   BENCH_SUSPEND_NODE=real  on the local real node instead (real containers; the claims bound and re-bound by
 *                            the local provisioner's volumes); N defaults to 5 there
 */
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { provisionOperatorIdentity, startLocalCluster } from '@sandbox-operator/local-cluster';
import { API_VERSION, GROUP, LABELS, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import { buildOperatorBundle } from '../../harness/operator-bundle.ts';
import { startTestScheduler } from '../../harness/scheduler.ts';
import { ours } from '../peer/subjects.ts';
import { figure, heading, ms, percentile, ratio } from '../report.ts';
import { clients, createMany, type Clients } from './cluster.ts';
import { realNodePodSpec } from '../real-node/bench.ts';

const onRealNode = process.env['BENCH_SUSPEND_NODE'] === 'real';
const count = Number(process.env['BENCH_SUSPEND_N'] ?? (onRealNode ? 5 : 50));
const group = 'bench-suspend';
const node = `${group}-a`;
const [RAW, OURS] = ['bench-suspend-raw', 'bench-suspend-ours'] as const;

const kwokPlacement = {
  schedulerName: group,
  nodeSelector: { [group]: 'yes' },
  tolerations: [{ key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' }],
  containers: [{ name: 'agent', image: 'agent:1' }],
};
const realPlacement = realNodePodSpec;
type Placement = typeof kwokPlacement | ReturnType<typeof realPlacement>;
let placement: Placement = kwokPlacement;
const names = (prefix: string) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

type Latencies = { readonly p50: number; readonly p99: number };

/**
 * Starts `act` on every name at once and polls (every 100 ms) which names `done` holds for, until all do: each
 * name's latency runs from the end of its own request to the first poll that sees it done.
 */
async function timedEach(
  items: readonly string[],
  act: (name: string) => Promise<unknown>,
  done: () => Promise<ReadonlySet<string>>,
  what: string,
): Promise<Latencies> {
  const started = new Map<string, number>();
  const finished = new Map<string, number>();
  const acting = createMany(items, async (name) => {
    await act(name);
    started.set(name, Date.now());
  });
  const deadline = Date.now() + 600_000;
  while (finished.size < items.length) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    const seen = await done();
    const now = Date.now();
    for (const name of items)
      if (!finished.has(name) && started.has(name) && seen.has(name)) finished.set(name, now);
    await delay(100);
  }
  await acting;
  const sorted = items
    .map((name) => (finished.get(name) ?? 0) - (started.get(name) ?? 0))
    .sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function podsOf(c: Clients, namespace: string) {
  return (await c.core.listNamespacedPod({ namespace })).items;
}
const live = (pod: { metadata?: { deletionTimestamp?: unknown } }) =>
  pod.metadata?.deletionTimestamp === undefined;

/** Names of bare pods not there any more. */
async function podsGone(c: Clients, items: readonly string[]): Promise<ReadonlySet<string>> {
  const present = new Set((await podsOf(c, RAW)).map((pod) => pod.metadata?.name ?? ''));
  return new Set(items.filter((name) => !present.has(name)));
}

/** Names of bare pods Running. */
async function podsRunning(c: Clients): Promise<ReadonlySet<string>> {
  const pods = await podsOf(c, RAW);
  return new Set(
    pods.filter((p) => live(p) && p.status?.phase === 'Running').map((p) => p.metadata?.name ?? ''),
  );
}

/** Sandboxes none of whose pods is left (not even terminating). */
async function sandboxesWithoutPods(c: Clients, items: readonly string[]): Promise<ReadonlySet<string>> {
  const owners = new Set((await podsOf(c, OURS)).map((pod) => pod.metadata?.labels?.[LABELS.sandbox] ?? ''));
  return new Set(items.filter((name) => !owners.has(name)));
}

type SandboxSeen = {
  metadata?: { name?: string; generation?: number };
  status?: { conditions?: { type?: string; status?: string; observedGeneration?: number }[] };
};

/** Sandboxes Ready for their current generation. */
async function sandboxesReady(c: Clients): Promise<ReadonlySet<string>> {
  const list = (await c.custom.listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: OURS,
    plural: SANDBOX.plural,
  })) as { items: SandboxSeen[] };
  return new Set(
    list.items
      .filter(({ metadata, status }) =>
        status?.conditions?.some(
          (c) => c.type === 'Ready' && c.status === 'True' && c.observedGeneration === metadata?.generation,
        ),
      )
      .map(({ metadata }) => metadata?.name ?? ''),
  );
}

const operatingMode = (c: Clients, name: string, mode: 'Running' | 'Suspended') =>
  c.custom.patchNamespacedCustomObject(
    {
      group: GROUP,
      version: VERSION,
      namespace: OURS,
      plural: SANDBOX.plural,
      name,
      body: { spec: { operatingMode: mode } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );

const sandboxBody = (name: string) => ({
  apiVersion: API_VERSION,
  kind: SANDBOX.kind,
  metadata: { name },
  spec: {
    worktree: 'wt-1',
    volumeClaimTemplates: [
      {
        metadata: { name: 'workspace' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: onRealNode ? '16Mi' : '1Gi' } },
        },
      },
    ],
    podTemplate: { spec: placement },
  },
});

function print(label: string, measured: Latencies, baseline: Latencies): void {
  figure(`${label}: p50`, ms(measured.p50));
  figure(`${label}: p99`, ms(measured.p99));
  ratio(`${label}: p50 against the baseline`, measured.p50, baseline.p50);
}

async function baselineOf(c: Clients) {
  const pods = names('pod');
  const create = await timedEach(
    pods,
    (name) => c.core.createNamespacedPod({ namespace: RAW, body: { metadata: { name }, spec: placement } }),
    () => podsRunning(c),
    `${count} bare pods Running`,
  );
  const remove = await timedEach(
    pods,
    (name) => c.core.deleteNamespacedPod({ namespace: RAW, name }),
    () => podsGone(c, pods),
    `${count} bare pods gone`,
  );
  return { create, remove };
}

export async function suspendBenchmarks(): Promise<void> {
  const where = onRealNode ? 'the real node' : 'kwok';
  heading(`suspend and resume of ${count} sandboxes (persistent workspace, ${where}) vs ${count} bare pods`);
  const main = await buildOperatorBundle('bench-bundle');
  const cluster = await startLocalCluster({
    logger: pino({ level: 'warn' }),
    ...(onRealNode ? { realNode: { taint: false } } : {}),
  });
  const c = clients(cluster);
  if (onRealNode && cluster.realNode === null) {
    console.log(`  (skipped: no real node: ${cluster.realNodeSkipReason ?? ''})`);
    await cluster.stop();
    return;
  }
  const scheduler = onRealNode ? null : await startTestScheduler(cluster.kubeconfigPath, group);
  try {
    if (cluster.realNode !== null && onRealNode) placement = realPlacement(cluster.realNode.images.shell);
    else
      await c.core.createNode({
        body: {
          metadata: { name: node, labels: { 'kubernetes.io/hostname': node, type: 'kwok', [group]: 'yes' } },
          spec: { taints: [{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }] },
        },
      });
    for (const namespace of [RAW, OURS])
      await c.core.createNamespace({ body: { metadata: { name: namespace } } });
    const baseline = await baselineOf(c);
    figure('baseline: bare pod delete → gone: p50', ms(baseline.remove.p50));
    figure('baseline: bare pod delete → gone: p99', ms(baseline.remove.p99));
    figure('baseline: bare pod create → Running: p50', ms(baseline.create.p50));
    figure('baseline: bare pod create → Running: p99', ms(baseline.create.p99));

    const operator = await ours({
      main,
      profileDir: null,
      kubeconfig: await provisionOperatorIdentity(cluster),
    }).start(cluster, OURS);
    try {
      const deadline = Date.now() + 120_000;
      while (!((await operator?.ready()) ?? true)) {
        if (Date.now() > deadline) throw new Error('bench: the operator did not get ready');
        await delay(200);
      }
      const sandboxes = names('sbx');
      const created = await timedEach(
        sandboxes,
        (name) =>
          c.custom.createNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: OURS,
            plural: SANDBOX.plural,
            body: sandboxBody(name),
          }),
        () => sandboxesReady(c),
        `${count} sandboxes Ready`,
      );
      figure('ours: sandbox create → Ready (claims, guard, pod): p50', ms(created.p50));
      const suspended = await timedEach(
        sandboxes,
        (name) => operatingMode(c, name, 'Suspended'),
        () => sandboxesWithoutPods(c, sandboxes),
        `${count} sandboxes without pods`,
      );
      print('ours: suspend → pods gone', suspended, baseline.remove);
      const resumed = await timedEach(
        sandboxes,
        (name) => operatingMode(c, name, 'Running'),
        () => sandboxesReady(c),
        `${count} sandboxes Ready again`,
      );
      print('ours: resume → Ready', resumed, baseline.create);
    } finally {
      await operator?.stop();
    }
  } finally {
    await scheduler?.stop();
    await cluster.stop();
  }
}
