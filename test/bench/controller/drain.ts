/**
 * `npm run bench -- drain` (issue 27, "Drains that finish"): `kubectl drain` of a kwok node running N
 * sandboxes (BENCH_DRAIN_N, default 50) whose disruption policy is Reschedule, under our operator bundled as
 * the image runs it, beside the same drain of N bare pods that nothing holds (the baseline, `--force`). Both
 * on one local control plane, two kwok nodes of the bench's own and a scheduler of its own (by name), so the
 * pods go back to the other node. Printed: the drain's wall time and its ratio to the baseline, and for ours
 * the time until every sandbox runs again on the other node.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import type { V1Pod } from '@kubernetes/client-node';
import {
  provisionOperatorIdentity,
  startLocalCluster,
  type LocalCluster,
} from '@sandbox-operator/local-cluster';
import { API_VERSION, GROUP, LABELS, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import { buildOperatorBundle } from '../../harness/operator-bundle.ts';
import { startTestScheduler } from '../../harness/scheduler.ts';
import { ours } from '../peer/subjects.ts';
import { figure, heading, ms, ratio } from '../report.ts';
import { clients, createMany, type Clients } from './cluster.ts';

const count = Number(process.env['BENCH_DRAIN_N'] ?? 50);
const group = 'bench-drain';
const [from, to] = [`${group}-a`, `${group}-b`] as const;

/** Where the pods may go: the bench's two nodes, by its own scheduler. */
const placement = {
  schedulerName: group,
  nodeSelector: { [group]: 'yes' },
  tolerations: [{ key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' }],
  containers: [{ name: 'agent', image: 'agent:1' }],
};

async function createNodes({ core }: Clients): Promise<void> {
  for (const name of [from, to])
    await core.createNode({
      body: {
        metadata: { name, labels: { 'kubernetes.io/hostname': name, type: 'kwok', [group]: 'yes' } },
        spec: { taints: [{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }] },
      },
    });
}

async function kubectlOk(cluster: LocalCluster, args: readonly string[]): Promise<void> {
  const result = await cluster.kubectl(args, { timeoutMs: 600_000 });
  if (result.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
}

/** Every running pod of the namespace, by node. */
async function runningOn(c: Clients, namespace: string, node: string): Promise<number> {
  const pods = await c.core.listNamespacedPod({ namespace });
  return pods.items.filter(
    (pod: V1Pod) =>
      pod.spec?.nodeName === node &&
      pod.status?.phase === 'Running' &&
      pod.metadata?.deletionTimestamp === undefined,
  ).length;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 600_000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`bench: timed out waiting for ${what}`);
    await delay(200);
  }
  return Date.now() - started;
}

/** With the other node cordoned, `create` puts N pods on `from`; then `from` is drained, timed. */
async function drainOf(
  cluster: LocalCluster,
  c: Clients,
  namespace: string,
  create: (index: number) => Promise<unknown>,
  drainArgs: readonly string[],
): Promise<number> {
  await kubectlOk(cluster, ['cordon', to]);
  await createMany(
    Array.from({ length: count }, (_, i) => i),
    create,
  );
  await until(
    `${count} pods running on ${from}`,
    async () => (await runningOn(c, namespace, from)) === count,
  );
  await kubectlOk(cluster, ['uncordon', to]);
  const started = Date.now();
  await kubectlOk(cluster, ['drain', from, '--ignore-daemonsets', '--timeout=600s', ...drainArgs]);
  return Date.now() - started;
}

export async function drainBenchmarks(): Promise<void> {
  heading(`kubectl drain of a node running ${count} sandboxes (Reschedule) vs ${count} bare pods`);
  const main = await buildOperatorBundle('bench-bundle');
  const cluster = await startLocalCluster({ logger: pino({ level: 'warn' }) });
  const c = clients(cluster);
  const scheduler = await startTestScheduler(cluster.kubeconfigPath, group);
  try {
    await createNodes(c);
    for (const namespace of ['bench-drain-raw', 'bench-drain-ours'])
      await c.core.createNamespace({ body: { metadata: { name: namespace } } });

    const baseline = await drainOf(
      cluster,
      c,
      'bench-drain-raw',
      (i) =>
        c.core.createNamespacedPod({
          namespace: 'bench-drain-raw',
          body: { metadata: { name: `pod-${i}` }, spec: placement },
        }),
      ['--force'],
    );
    await kubectlOk(cluster, ['uncordon', from]);
    figure('baseline: drain of bare pods (nothing holds them)', ms(baseline));

    const operator = await ours({
      main,
      profileDir: null,
      kubeconfig: await provisionOperatorIdentity(cluster),
    }).start(cluster, 'bench-drain-ours');
    try {
      await until('the operator ready', async () => (await operator?.ready()) ?? true, 120_000);
      let movedAfter = 0;
      const drained = await drainOf(
        cluster,
        c,
        'bench-drain-ours',
        (i) =>
          c.custom.createNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: 'bench-drain-ours',
            plural: SANDBOX.plural,
            body: {
              apiVersion: API_VERSION,
              kind: SANDBOX.kind,
              metadata: { name: `sbx-${i}` },
              spec: {
                worktree: 'wt-1',
                disruption: { policy: 'Reschedule', holdSeconds: 300 },
                volumeClaimTemplates: [
                  {
                    metadata: { name: 'workspace' },
                    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
                  },
                ],
                podTemplate: { spec: placement },
              },
            },
          }),
        [],
      );
      const drainEnded = Date.now();
      await until(`${count} sandboxes running on ${to}`, async () => {
        const running = await c.core.listNamespacedPod({
          namespace: 'bench-drain-ours',
          labelSelector: LABELS.sandbox,
        });
        const moved = running.items.filter(
          (pod) => pod.spec?.nodeName === to && pod.status?.phase === 'Running',
        ).length;
        return moved === count;
      });
      movedAfter = Date.now() - drainEnded;
      figure('ours: drain of sandboxes (Reschedule, no turn running)', ms(drained));
      ratio('ours against the baseline (drain wall time)', drained, baseline);
      figure('ours: after the drain, until all run on the other node', ms(movedAfter));
    } finally {
      await operator?.stop();
    }
  } finally {
    await scheduler.stop();
    await cluster.stop();
  }
}
