/**
 * `npm run bench -- claim-exec` (and the last rows of `claims`): issue 28's real-node figure, claim → first
 * command run in the sandbox, ours beside kubernetes-sigs/agent-sandbox's (claim-exec-peer.ts) on one control
 * plane with both CRD sets. On the local real node (containerd, real containers), each keeps a warm pool of
 * real sandboxes (the same pod spec, the same size); ours is claimed as an agent host claims (the client's
 * `claim()`, which waits for Ready), then `kubectl exec … -- true` runs in the bound sandbox's agent
 * container. Each subject's baseline: the same `kubectl exec` into its sandbox, now running (what exec alone
 * costs here). Ours runs first, then the peer, each in its own namespace, ours cleared before the peer's.
 *   BENCH_CLAIM_EXEC_N=10    claims, one at a time, each on a full pool (default 10)
 */
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { LocalCluster } from '@sandbox-operator/local-cluster';
import {
  API_VERSION,
  GROUP,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
  VERSION,
} from '../../../operator/api/names.ts';
import { SandboxClaims } from '../../../operator/client/sandbox-claims.ts';
import { podName } from '../../../operator/controller/pod-template.ts';
import { rm } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { waitFor, type Clients } from '../controller/cluster.ts';
import { ensurePeer, PEER_VERSION } from '../peer/agent-sandbox.ts';
import { crdDir } from '../peer/crd-dir.ts';
import { heading } from '../report.ts';
import { execTrue, realNodePodSpec, withRealNode } from './bench.ts';
import { watchClaimsReady } from '../claims/watch.ts';
import { measurePeerClaimExec, PoolNotFilled, within } from './claim-exec-peer.ts';
import { claimExecTable, type ClaimExecFigures, type ClaimExecOutcome } from './claim-exec-table.ts';

const POOL = 'exec-pool';
const TEMPLATE = 'exec-template';
const REPLICAS = 2;

function claimsCount(): number {
  const given = process.env['BENCH_CLAIM_EXEC_N'];
  if (given === undefined || given === '') return 10;
  const value = Number(given);
  if (!Number.isInteger(value) || value < 1 || value > 200)
    throw new Error(`BENCH_CLAIM_EXEC_N must be a whole number from 1 to 200; got "${given}"`);
  return value;
}

async function createPool(c: Clients, namespace: string, shellImage: string): Promise<void> {
  const create = (plural: string, body: Record<string, unknown>) =>
    c.custom.createNamespacedCustomObject({
      group: 'sandbox.agents.dev',
      version: 'v1alpha1',
      namespace,
      plural,
      body: { apiVersion: API_VERSION, ...body },
    });
  await create(SANDBOX_TEMPLATE.plural, {
    kind: SANDBOX_TEMPLATE.kind,
    metadata: { name: TEMPLATE, namespace },
    spec: {
      podTemplate: {
        spec: realNodePodSpec(shellImage),
      },
    },
  });
  await create(SANDBOX_WARM_POOL.plural, {
    kind: SANDBOX_WARM_POOL.kind,
    metadata: { name: POOL, namespace },
    spec: { templateRef: { name: TEMPLATE }, replicas: REPLICAS },
  });
}

async function readyReplicas(c: Clients, namespace: string): Promise<number> {
  const pool = (await c.custom.getNamespacedCustomObject({
    group: 'sandbox.agents.dev',
    version: 'v1alpha1',
    namespace,
    plural: SANDBOX_WARM_POOL.plural,
    name: POOL,
  })) as { status?: { readyReplicas?: number } };
  return pool.status?.readyReplicas ?? 0;
}

/** Ours on a running local cluster with a real node and our operator, in `namespace`. */
export async function measureClaimExec(
  cluster: LocalCluster,
  c: Clients,
  shellImage: string,
  n: number,
  namespace: string,
): Promise<ClaimExecFigures> {
  await createPool(c, namespace, shellImage);
  const full = () =>
    waitFor(
      `${REPLICAS} ready real sandboxes in ${POOL}`,
      async () => (await readyReplicas(c, namespace)) >= REPLICAS,
      600_000,
    );
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  const claims = new SandboxClaims(kc);
  // Beside the client's own wait, not in its way: when the claim's Ready first shows on a watch.
  const watched = await watchClaimsReady(
    kc,
    `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${SANDBOX_CLAIM.plural}`,
  );
  const claimToExec: number[] = [];
  const claimToReady: number[] = [];
  const claimToReadyWatched: number[] = [];
  const execAlone: number[] = [];
  let cold = 0;
  try {
    for (let i = 0; i < n; i += 1) {
      await full();
      const name = `claim-${i}`;
      const started = performance.now();
      const bound = await claims.claim(
        {
          namespace,
          name,
          session: `workspace_bench_${i}`,
          worktree: 'wt-1',
          route: `bench/${i}`,
          role: 'Root',
          warmPoolRef: { name: POOL },
        },
        { deadlineMs: 300_000 },
      );
      claimToReady.push(performance.now() - started);
      await execTrue(cluster, namespace, podName(bound.sandbox, 0));
      claimToExec.push(performance.now() - started);
      if (bound.launchType === 'Cold') cold += 1;
      // The baseline: the same command into the same sandbox, now that it runs.
      const again = performance.now();
      await execTrue(cluster, namespace, podName(bound.sandbox, 0));
      execAlone.push(performance.now() - again);
      claimToReadyWatched.push((await within(watched.when(name), 60_000, `claim ${name} Ready`)) - started);
    }
  } finally {
    watched.stop();
  }
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  return {
    claimToExec: sorted(claimToExec),
    claimToReady: sorted(claimToReady),
    claimToReadyWatched: sorted(claimToReadyWatched),
    execAlone: sorted(execAlone),
    cold,
  };
}

/** A fresh namespace for one subject. */
async function namespaceFor(c: Clients, subject: string): Promise<string> {
  const namespace = `bench-claim-exec-${subject}-${Date.now().toString(36)}`;
  await c.core.createNamespace({ body: { metadata: { name: namespace } } });
  return namespace;
}

/**
 * Deletes a subject's namespace and waits for its pods to be gone, so the next subject runs on a quiet node
 * (real containers stop in their 30 s grace period); says so, and why, when they are not gone in time.
 */
async function cleared(c: Clients, namespace: string): Promise<void> {
  await c.core.deleteNamespace({ name: namespace });
  const deadline = Date.now() + 180_000;
  let pods: V1Pod[] = [];
  while (Date.now() < deadline) {
    pods = (await c.core.listNamespacedPod({ namespace })).items;
    if (pods.length === 0) return;
    await delay(1_000);
  }
  const deleting = pods.filter((pod) => pod.metadata?.deletionTimestamp !== undefined).length;
  const status = (await c.core.readNamespace({ name: namespace })).status;
  const why = (status?.conditions ?? []).filter((condition) => condition.status === 'True');
  console.log(
    `  (${namespace} still had ${pods.length} pods after 180 s, ${deleting} being deleted; namespace ${status?.phase ?? '?'}${why.map((w) => `, ${w.type}: ${w.message ?? ''}`).join('')}; the next subject runs beside them)`,
  );
}

const failed = (error: unknown): ClaimExecOutcome => ({
  ok: false,
  failed: true,
  reason: `failed: ${error instanceof Error ? error.message : String(error)}`,
});

/** One subject in its own namespace, cleared after when another follows; an error is its outcome. */
async function subject(
  c: Clients,
  name: string,
  measure: (namespace: string) => Promise<ClaimExecFigures>,
  { clear }: { readonly clear: boolean },
): Promise<ClaimExecOutcome> {
  const namespace = await namespaceFor(c, name);
  try {
    return { ok: true, figures: await measure(namespace) };
  } catch (error: unknown) {
    if (error instanceof PoolNotFilled)
      return { ok: false, failed: false, reason: `not available: ${error.message}` };
    return failed(error);
  } finally {
    if (clear) await cleared(c, namespace);
  }
}

export function printClaimExec(n: number, subjects: Parameters<typeof claimExecTable>[1]): void {
  heading(
    `real node: claim -> first command (kubectl exec) in the sandbox, ${n} claims one at a time, a pool of ${REPLICAS} each`,
  );
  for (const line of claimExecTable(n, subjects)) console.log(line);
  console.log(
    "  claim -> Ready as the client waits: ours, our client's claim() (it watches the claim from its create's version); agent-sandbox, a watch of its claims (its client watches)",
  );
}

export async function claimExecBenchmarks(): Promise<void> {
  const n = claimsCount();
  const peer = await ensurePeer();
  console.log(
    `  machine: ${cpus().length} cores, load average ${loadavg()[0]?.toFixed(1)} at start; agent-sandbox ${PEER_VERSION}`,
  );
  const dir = await crdDir(peer.ok ? [peer.crd, ...peer.extensionCrds] : []);
  try {
    await withRealNode(
      async (cluster, c, shellImage) => {
        const ours = await subject(
          c,
          'ours',
          (namespace) => measureClaimExec(cluster, c, shellImage, n, namespace),
          { clear: true },
        );
        // The peer last, its namespace left to the cluster's stop: here the kubelet, the scheduler and
        // kube-controller-manager run as admin, our operator's user (allowAdmin), and our operator bounds
        // refuse that user the final delete of any pod that is not a sandbox's, so its pods would stop but
        // never go.
        const peerOutcome: ClaimExecOutcome = peer.ok
          ? await subject(
              c,
              'peer',
              (namespace) =>
                measurePeerClaimExec(cluster, c, {
                  binary: peer.binary,
                  namespace,
                  shellImage,
                  replicas: REPLICAS,
                  claims: n,
                }),
              { clear: false },
            )
          : { ok: false, failed: false, reason: `not available: ${peer.reason}` };
        printClaimExec(n, { peer: peerOutcome, ours });
        console.log(
          `  load average at the end: ${loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')}`,
        );
        if ([peerOutcome, ours].some((o) => !o.ok && o.failed)) process.exitCode = 1;
      },
      { crdDir: dir },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
