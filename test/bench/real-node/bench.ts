/**
 * `npm run bench -- real-node`: real containers beside kwok in one run. For 50 sandboxes of each kind:
 * create → Running (the sandbox's pod Running; for real pods, its containers started), and delete →
 * containers gone (the pod object gone; for real pods, also no process of theirs left on the host).
 */
import { sandboxDeleter } from '../../harness/admission.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { API_VERSION, GROUP, LABELS, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import { kwokNodeName, startLocalCluster, type LocalCluster } from '@sandbox-operator/local-cluster';
import { pino } from 'pino';
import {
  clients,
  allowAdmin,
  createMany,
  startOperator,
  waitFor,
  type Clients,
} from '../controller/cluster.ts';
import { figure, heading, ms, percentile, ratio } from '../report.ts';

const SANDBOXES = 50;

function hostCommandLines(): string[] {
  const lines: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      lines.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // ended while we looked
    }
  }
  return lines;
}

/** A pod spec on the local real node: the shell image, idling (its `sh` ignores SIGTERM: 30 s to stop). */
export const realNodePodSpec = (shellImage: string) => ({
  nodeSelector: { 'kubernetes.io/hostname': '127.0.0.1' },
  containers: [
    {
      name: 'agent',
      image: shellImage,
      imagePullPolicy: 'Never',
      command: ['sh', '-c', 'while true; do sleep 1; done'],
    },
  ],
});

function body(kind: 'kwok' | 'real', namespace: string, name: string, shellImage: string) {
  const spec =
    kind === 'kwok'
      ? { nodeName: kwokNodeName(0), containers: [{ name: 'agent', image: 'agent:1' }] }
      : {
          nodeSelector: { 'kubernetes.io/hostname': '127.0.0.1' },
          containers: [
            {
              name: 'agent',
              image: shellImage,
              imagePullPolicy: 'Never',
              command: ['sh', '-c', 'while true; do sleep 1; done', `bench-${namespace}-${name}`],
            },
          ],
        };
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX.kind,
    metadata: { name, namespace },
    spec: { worktree: 'wt-1', podTemplate: { spec } },
  };
}

async function runningPods(c: Clients, namespace: string): Promise<Map<string, boolean>> {
  const pods = await c.core.listNamespacedPod({ namespace });
  return new Map(
    pods.items.map((pod) => [
      pod.metadata?.labels?.[LABELS.sandbox] ?? '',
      pod.status?.phase === 'Running' &&
        (pod.status.containerStatuses ?? []).every((s) => s.state?.running !== undefined),
    ]),
  );
}

async function measure(c: Clients, kind: 'kwok' | 'real', shellImage: string) {
  const namespace = `bench-${kind}-${Date.now().toString(36)}`;
  await c.core.createNamespace({ body: { metadata: { name: namespace } } });
  const names = Array.from({ length: SANDBOXES }, (_, i) => `s${i}`);
  const created = new Map<string, number>();
  const running = new Map<string, number>();
  await createMany(
    names,
    async (name) => {
      created.set(name, performance.now());
      await c.custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        body: body(kind, namespace, name, shellImage),
      });
    },
    8,
  );
  await waitFor(
    `${kind}: ${SANDBOXES} sandboxes Running`,
    async () => {
      for (const [name, up] of await runningPods(c, namespace))
        if (up && !running.has(name)) running.set(name, performance.now());
      return running.size === SANDBOXES;
    },
    600_000,
  );
  const deleted = new Map<string, number>();
  const gone = new Map<string, number>();
  // As a user deletes: admin is the operator here, and may delete only what its cleanup fenced.
  const deleter = await sandboxDeleter(c.kc);
  await createMany(
    names,
    async (name) => {
      deleted.set(name, performance.now());
      await deleter.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        name,
      });
    },
    8,
  );
  await waitFor(
    `${kind}: ${SANDBOXES} sandboxes' containers gone`,
    async () => {
      const pods = await runningPods(c, namespace);
      const lines = kind === 'real' ? hostCommandLines() : [];
      for (const name of names) {
        if (gone.has(name) || pods.has(name)) continue;
        if (lines.some((line) => line.includes(`bench-${namespace}-${name}`))) continue;
        gone.set(name, performance.now());
      }
      return gone.size === SANDBOXES;
    },
    600_000,
  );
  const spans = (start: Map<string, number>, end: Map<string, number>) =>
    names.map((n) => (end.get(n) ?? Number.NaN) - (start.get(n) ?? Number.NaN)).sort((a, b) => a - b);
  return { up: spans(created, running), down: spans(deleted, gone) };
}

/**
 * A local control plane with the real node, our operator (8 workers) running against it, and `run`; said and
 * skipped where this machine has no real node. Everything is stopped after. `crdDir`: another CRD directory
 * (ours and a peer's, test/bench/peer/crd-dir.ts).
 */
export async function withRealNode(
  run: (cluster: LocalCluster, c: Clients, shellImage: string) => Promise<void>,
  { crdDir }: { readonly crdDir?: string } = {},
): Promise<void> {
  const cluster = await startLocalCluster({
    logger: pino({ level: 'warn' }),
    realNode: { taint: false },
    ...(crdDir === undefined ? {} : { crdDir }),
  });
  try {
    if (cluster.realNode === null) {
      console.log(`  (skipped: no real node: ${cluster.realNodeSkipReason ?? ''})`);
      return;
    }
    const c = clients(cluster);
    await allowAdmin(c);
    const operator = await startOperator(cluster, undefined, 8);
    try {
      await operator.startup;
      await run(cluster, c, cluster.realNode.images.shell);
    } finally {
      await operator.stop();
    }
  } finally {
    await cluster.stop();
  }
}

/** `kubectl exec … -- true` in a pod's agent container: the first command an agent host runs. */
export async function execTrue(cluster: LocalCluster, namespace: string, pod: string): Promise<void> {
  const result = await cluster.kubectl(['exec', '-n', namespace, pod, '-c', 'agent', '--', 'true']);
  if (result.exitCode !== 0)
    throw new Error(`kubectl exec into ${namespace}/${pod} exited ${result.exitCode}: ${result.stderr}`);
}

export async function realNodeBenchmarks(): Promise<void> {
  await withRealNode(async (_cluster, c, shellImage) => {
    const kwok = await measure(c, 'kwok', shellImage);
    const real = await measure(c, 'real', shellImage);
    for (const [label, kw, re] of [
      ['create → Running', kwok.up, real.up],
      ['delete → containers gone', kwok.down, real.down],
    ] as const) {
      heading(`${label}, ${SANDBOXES} sandboxes (one pod each)`);
      for (const p of [50, 99]) {
        figure(`kwok p${p}`, ms(percentile(kw, p)));
        figure(`real containers p${p}`, ms(percentile(re, p)));
        ratio(`kwok is faster than real containers at p${p} by`, percentile(re, p), percentile(kw, p));
      }
    }
  });
}
