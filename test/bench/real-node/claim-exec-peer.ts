/**
 * claim-exec's second subject, kubernetes-sigs/agent-sandbox on the local real node: its controller with
 * `--extensions` (built by ensurePeer), a SandboxTemplate with the real-node pod spec and a SandboxWarmPool
 * of it, then SandboxClaims one at a time, each on a full pool. The peer's client call that waits is its
 * Python client's `wait_for_claim_ready`, a watch of the claim; so a claim's Ready here is the first event of
 * a watch of the claims with `Ready=True`. The pod is then found as its clients find it: the bound Sandbox
 * from the claim's `status.sandbox.name`, the pod named by that Sandbox's `agents.x-k8s.io/pod-name`
 * annotation, else the Sandbox's name.
 */
import type { LocalCluster } from '@sandbox-operator/local-cluster';
import { setTimeout as delay } from 'node:timers/promises';
import { waitFor, type Clients } from '../controller/cluster.ts';
import { startAgentSandbox } from '../peer/subjects.ts';
import { watchClaimsReady } from '../claims/watch.ts';
import { peerIdentity } from '../peer/identity.ts';
import { execTrue, realNodePodSpec } from './bench.ts';
import type { ClaimExecFigures } from './claim-exec-table.ts';

const GROUP = 'extensions.agents.x-k8s.io';
const VERSION = 'v1beta1';
const POOL = 'exec-pool';
const TEMPLATE = 'exec-template';
const POD_NAME = 'agents.x-k8s.io/pod-name';
const LAUNCH_TYPE = 'agents.x-k8s.io/launch-type';

/** Real pods start in a few seconds here; a pool not full by then will not be. */
const FILL_MS = 180_000;

type Sandbox = {
  metadata?: { name?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  status?: { conditions?: { type?: string; status?: string; reason?: string; message?: string }[] };
};

/** The peer's pool did not fill on the real node: it cannot run here (its sandboxes say why). */
export class PoolNotFilled extends Error {}

/** The peer's run on the real node; its controller is stopped after, its namespace left to the caller. */
export async function measurePeerClaimExec(
  cluster: LocalCluster,
  c: Clients,
  { binary, namespace, shellImage, replicas, claims }: PeerRun,
): Promise<ClaimExecFigures> {
  const create = (plural: string, body: Record<string, unknown>) =>
    c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural,
      body: { apiVersion: `${GROUP}/${VERSION}`, ...body },
    });
  const identity = await peerIdentity(cluster);
  const controller = await startAgentSandbox(binary, cluster, { extensions: true, kubeconfig: identity });
  const watch = await watchClaimsReady(
    c.kc,
    `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/sandboxclaims`,
  );
  try {
    await waitFor('agent-sandbox ready', () => controller.ready(), 120_000);
    await create('sandboxtemplates', {
      kind: 'SandboxTemplate',
      metadata: { name: TEMPLATE },
      spec: { podTemplate: { spec: realNodePodSpec(shellImage) } },
    });
    await create('sandboxwarmpools', {
      kind: 'SandboxWarmPool',
      metadata: { name: POOL },
      spec: { replicas, sandboxTemplateRef: { name: TEMPLATE } },
    });
    const full = () =>
      waitFor(
        `${replicas} ready real sandboxes in agent-sandbox's ${POOL}`,
        async () => (await readyReplicas(c, namespace)) >= replicas,
        FILL_MS,
      ).catch(async (cause: unknown) => {
        throw new PoolNotFilled(await notReady(c, namespace), { cause });
      });
    const claimToExec: number[] = [];
    const claimToReady: number[] = [];
    const execAlone: number[] = [];
    let cold = 0;
    for (let i = 0; i < claims; i += 1) {
      await full();
      const name = `claim-${i}`;
      const started = performance.now();
      await create('sandboxclaims', {
        kind: 'SandboxClaim',
        metadata: { name },
        spec: { warmPoolRef: { name: POOL } },
      });
      const ready = await within(watch.when(name), 300_000, `agent-sandbox's claim ${name} Ready`);
      claimToReady.push(ready - started);
      const bound = watch.sandbox.get(name);
      if (bound === undefined) throw new Error(`agent-sandbox's claim ${name} is Ready with no sandbox`);
      const sandbox = (await c.custom.getNamespacedCustomObject({
        group: 'agents.x-k8s.io',
        version: VERSION,
        namespace,
        plural: 'sandboxes',
        name: bound,
      })) as Sandbox;
      const pod = sandbox.metadata?.annotations?.[POD_NAME] || bound;
      await execTrue(cluster, namespace, pod);
      claimToExec.push(performance.now() - started);
      if (sandbox.metadata?.labels?.[LAUNCH_TYPE] === 'cold') cold += 1;
      // The baseline: the same command into the same sandbox, now that it runs.
      const again = performance.now();
      await execTrue(cluster, namespace, pod);
      execAlone.push(performance.now() - again);
    }
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    return {
      claimToExec: sorted(claimToExec),
      claimToReady: sorted(claimToReady),
      claimToReadyWatched: sorted(claimToReady),
      execAlone: sorted(execAlone),
      cold,
    };
  } finally {
    watch.stop();
    await controller.stop();
  }
}

export type PeerRun = {
  /** The controller built by ensurePeer. */
  readonly binary: string;
  readonly namespace: string;
  readonly shellImage: string;
  readonly replicas: number;
  readonly claims: number;
};

async function readyReplicas(c: Clients, namespace: string): Promise<number> {
  const pool = (await c.custom.getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: 'sandboxwarmpools',
    name: POOL,
  })) as { status?: { readyReplicas?: number } };
  return pool.status?.readyReplicas ?? 0;
}

/** Why the peer's sandboxes are not Ready: each distinct Ready condition's reason and message. */
async function notReady(c: Clients, namespace: string): Promise<string> {
  const list = (await c.custom.listNamespacedCustomObject({
    group: 'agents.x-k8s.io',
    version: VERSION,
    namespace,
    plural: 'sandboxes',
  })) as { items: Sandbox[] };
  const why = new Set(
    list.items.map((sandbox) => {
      const ready = sandbox.status?.conditions?.find((condition) => condition.type === 'Ready');
      return ready === undefined ? 'no Ready condition' : `${ready.reason ?? ''}: ${ready.message ?? ''}`;
    }),
  );
  return `agent-sandbox's pool not full after ${FILL_MS / 1000} s, ${list.items.length} sandboxes: ${[...why].join('; ')}`;
}

/** `seen`, or an error saying what was not seen after `timeoutMs`. */
export async function within(seen: Promise<number>, timeoutMs: number, what: string): Promise<number> {
  const timer = new AbortController();
  const expired = delay(timeoutMs, null, { signal: timer.signal }).catch(() => null);
  const at = await Promise.race([seen, expired]);
  timer.abort();
  if (at === null) throw new Error(`${what}: not seen after ${timeoutMs / 1000} s`);
  return at;
}
