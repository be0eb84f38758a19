/**
 * `npm run bench -- claim-exec` (and the last rows of `claims`): issue 28's real-node figure, claim → first
 * command run in the sandbox. On the local real node (containerd, real containers), our operator keeps a warm
 * pool of real sandboxes; each claim is made as an agent host makes it (the client's `claim()`, which waits
 * for Ready), then `kubectl exec … -- true` runs in the bound sandbox's agent container. The baseline in the
 * same run: the same `kubectl exec` into a sandbox already running (what exec alone costs here).
 *   BENCH_CLAIM_EXEC_N=10    claims, one at a time, each on a full pool (default 10)
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { LocalCluster } from '@sandbox-operator/local-cluster';
import { API_VERSION, SANDBOX_TEMPLATE, SANDBOX_WARM_POOL } from '../../../operator/api/names.ts';
import { SandboxClaims } from '../../../operator/client/sandbox-claims.ts';
import { podName } from '../../../operator/controller/pod-template.ts';
import { waitFor, type Clients } from '../controller/cluster.ts';
import { realNodePodSpec, withRealNode } from './bench.ts';
import { figure, heading, ms, percentile, ratio } from '../report.ts';

const POOL = 'exec-pool';
const TEMPLATE = 'exec-template';
const REPLICAS = 2;

export type ClaimExecFigures = {
  readonly claimToExec: number[];
  readonly claimToReady: number[];
  readonly execAlone: number[];
  readonly cold: number;
};

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

async function exec(cluster: LocalCluster, namespace: string, sandbox: string): Promise<void> {
  const result = await cluster.kubectl([
    'exec',
    '-n',
    namespace,
    podName(sandbox, 0),
    '-c',
    'agent',
    '--',
    'true',
  ]);
  if (result.exitCode !== 0)
    throw new Error(`kubectl exec into ${namespace}/${sandbox} exited ${result.exitCode}: ${result.stderr}`);
}

/** The figures on a running local cluster with a real node and our operator. */
export async function measureClaimExec(
  cluster: LocalCluster,
  c: Clients,
  shellImage: string,
  n: number,
): Promise<ClaimExecFigures> {
  const namespace = `bench-claim-exec-${Date.now().toString(36)}`;
  await c.core.createNamespace({ body: { metadata: { name: namespace } } });
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
  const claimToExec: number[] = [];
  const claimToReady: number[] = [];
  const execAlone: number[] = [];
  let cold = 0;
  for (let i = 0; i < n; i += 1) {
    await full();
    const started = performance.now();
    const bound = await claims.claim(
      {
        namespace,
        name: `claim-${i}`,
        session: `workspace_bench_${i}`,
        worktree: 'wt-1',
        route: `bench/${i}`,
        role: 'Root',
        warmPoolRef: { name: POOL },
      },
      { deadlineMs: 300_000 },
    );
    claimToReady.push(performance.now() - started);
    await exec(cluster, namespace, bound.sandbox);
    claimToExec.push(performance.now() - started);
    if (bound.launchType === 'Cold') cold += 1;
    // The baseline: the same command into the same sandbox, now that it runs.
    const again = performance.now();
    await exec(cluster, namespace, bound.sandbox);
    execAlone.push(performance.now() - again);
  }
  await c.core.deleteNamespace({ name: namespace });
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  return {
    claimToExec: sorted(claimToExec),
    claimToReady: sorted(claimToReady),
    execAlone: sorted(execAlone),
    cold,
  };
}

export function printClaimExec(figures: ClaimExecFigures, n: number): void {
  heading(
    `real node: claim -> first command (kubectl exec) in the sandbox, ${n} claims one at a time, a pool of ${REPLICAS}`,
  );
  figure('baseline: kubectl exec into a running sandbox, p50', ms(percentile(figures.execAlone, 50)));
  figure('ours: claim -> Ready (client claim()), p50', ms(percentile(figures.claimToReady, 50)));
  figure('ours: claim -> first command done, p50', ms(percentile(figures.claimToExec, 50)));
  figure('ours: claim -> first command done, p99', ms(percentile(figures.claimToExec, 99)));
  figure('claims bound Cold (pool empty)', String(figures.cold));
  ratio(
    'claim -> first command against exec alone, p50',
    percentile(figures.claimToExec, 50),
    percentile(figures.execAlone, 50),
  );
}

export async function claimExecBenchmarks(): Promise<void> {
  const n = claimsCount();
  await withRealNode(async (cluster, c, shellImage) =>
    printClaimExec(await measureClaimExec(cluster, c, shellImage, n), n),
  );
}
