/**
 * One subject of the claims bench, each in a fresh namespace: the raw baseline (label updates on ready pods),
 * or a controller's warm pool of N, then `sequential` claims one at a time (each waits for the previous one's
 * Ready), the pool back to N ready, then N claims at once (BURST_IN_FLIGHT requests in flight).
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { kwokNodeName, type LocalCluster } from '@sandbox-operator/local-cluster';
import { setTimeout as delay } from 'node:timers/promises';
import { createMany, type Clients } from '../controller/cluster.ts';
import { cpuMs, quiet } from '../peer/measure.ts';
import { series, type Outcome } from './figures.ts';
import type { Controller } from '../peer/subjects.ts';
import type { ClaimSubject } from './subjects.ts';
import { watchClaimsReady, watchPods, type Observed } from './watch.ts';

/** Requests in flight in a burst (claims, pod creates, label updates): a busy client, not a flood. */
export const BURST_IN_FLIGHT = 32;
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const LABEL = 'bench.sandbox.agents.dev/turn';

export type Sizes = { readonly pool: number; readonly sequential: number };

const names = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);

/** Waits until every name is observed, or throws naming how many were after `timeoutMs`. */
async function all(what: string, observed: Observed, wanted: readonly string[], timeoutMs: number) {
  // The timer is cancelled once all are seen, so no late rejection outlives the wait.
  const timer = new AbortController();
  const timedOut = delay(timeoutMs, true, { signal: timer.signal }).catch(() => false);
  const expired = await Promise.race([
    Promise.all(wanted.map((name) => observed.when(name))).then(() => false),
    timedOut,
  ]);
  timer.abort();
  if (expired) {
    const seen = wanted.filter((name) => observed.at.has(name)).length;
    throw new Error(`${seen} of ${wanted.length} ${what} after ${(timeoutMs / 1000).toFixed(0)} s`);
  }
}

const namespaceFor = async (c: Clients, subject: string, pool: number) => {
  const namespace = `claims-${subject.replace(/[^a-z0-9]+/g, '-')}-${pool}-${Date.now().toString(36)}`;
  await c.core.createNamespace({ body: { metadata: { name: namespace } } });
  return namespace;
};

/** The raw baseline: a label update on a ready pod, observed by a watch; one pod, then N pods at once. */
export async function runRaw(cluster: LocalCluster, c: Clients, sizes: Sizes): Promise<Outcome> {
  const namespace = await namespaceFor(c, 'raw', sizes.pool);
  const apiserver = apiserverPid(cluster);
  const pods = await watchPods(c.kc, namespace, LABEL);
  const createPod = (name: string) =>
    c.core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name },
        spec: { nodeName: kwokNodeName(0), containers: [{ name: 'agent', image: 'agent:1' }] },
      },
    });
  const label = (pod: string, value: string) =>
    c.core.patchNamespacedPod(
      { namespace, name: pod, body: { metadata: { labels: { [LABEL]: value } } } },
      MERGE,
    );
  try {
    await createPod('one');
    await all('pods running', pods.running, ['one'], 60_000);
    const sequentialSent = new Map<string, number>();
    for (const turn of names('turn', sizes.sequential)) {
      const key = `one=${turn}`;
      sequentialSent.set(key, performance.now());
      await label('one', turn);
      await all('label updates', pods.labelled, [key], 60_000);
    }
    const many = names('pod', sizes.pool);
    await createMany(many, createPod, BURST_IN_FLIGHT);
    await all('pods running', pods.running, many, 120_000 + sizes.pool * 300);
    const burstSent = new Map<string, number>();
    const apiBefore = cpuMs(apiserver);
    await createMany(
      many,
      async (pod) => {
        burstSent.set(`${pod}=burst`, performance.now());
        await label(pod, 'burst');
      },
      BURST_IN_FLIGHT,
    );
    await all('label updates', pods.labelled, [...burstSent.keys()], 120_000 + sizes.pool * 300);
    return {
      ok: true,
      sequential: series(sequentialSent, pods.labelled.at),
      burst: series(burstSent, pods.labelled.at),
      poolFillMs: null,
      cpuPerClaimMs: null,
      apiserverCpuMs: cpuMs(apiserver) - apiBefore,
      coldInBurst: null,
    };
  } finally {
    pods.stop();
  }
}

function apiserverPid(cluster: LocalCluster): number {
  const pid = cluster.pids()['kube-apiserver'];
  if (pid === undefined) throw new Error('bench: no kube-apiserver pid');
  return pid;
}

/** A subject that runs but does not do pools here (no status written): printed as "not available". */
class PoolNotServed extends Error {}

/** How long a pool may go without any status before the build is judged to have no pool reconciler. */
const FIRST_STATUS_MS = 30_000;

/** Polls the pool's readyReplicas until it reaches `replicas`; returns when (performance.now()). */
async function poolReady(
  subject: ClaimSubject,
  c: Clients,
  namespace: string,
  replicas: number,
  timeoutMs: number,
): Promise<number> {
  const started = Date.now();
  let ready: number | null = null;
  while (Date.now() < started + timeoutMs) {
    ready = await subject.readyReplicas(c, namespace).catch(() => null);
    if (ready !== null && ready >= replicas) return performance.now();
    if (ready === null && Date.now() > started + FIRST_STATUS_MS)
      throw new PoolNotServed(
        `no status on the pool after ${FIRST_STATUS_MS / 1000} s: this build runs no pool reconciler`,
      );
    await delay(100);
  }
  throw new Error(
    `the pool had ${ready ?? 0} of ${replicas} ready sandboxes after ${(timeoutMs / 1000).toFixed(0)} s`,
  );
}

/** A controller's pool and claims; a subject that cannot run here, or fails, is an outcome with its reason. */
export async function runClaims(
  cluster: LocalCluster,
  c: Clients,
  subject: ClaimSubject,
  sizes: Sizes,
): Promise<Outcome> {
  const unavailable = await subject.available(c);
  if (unavailable !== null) return { ok: false, failed: false, reason: `not available: ${unavailable}` };
  const namespace = await namespaceFor(c, subject.name, sizes.pool);
  const apiserver = apiserverPid(cluster);
  const claims = await watchClaimsReady(c.kc, subject.claimsPath(namespace));
  const fillTimeout = 120_000 + sizes.pool * 300;
  let controller: Controller | undefined;
  try {
    controller = await subject.start(cluster, namespace);
    const readyBy = Date.now() + 120_000;
    while (!(await controller.ready())) {
      if (Date.now() > readyBy) throw new Error(`${subject.name} not ready after 120 s`);
      await delay(200);
    }
    await quiet(controller.pid);

    const poolCreated = performance.now();
    await subject.createPool(c, namespace, sizes.pool);
    const poolFillMs = (await poolReady(subject, c, namespace, sizes.pool, fillTimeout)) - poolCreated;
    await quiet(controller.pid);

    const sequentialSent = new Map<string, number>();
    for (const [i, name] of names('one', sizes.sequential).entries()) {
      sequentialSent.set(name, performance.now());
      await subject.claim(c, namespace, name, i);
      await all('claims Ready', claims, [name], 60_000);
    }
    // The burst starts against a full pool, as the "1,000 claims against a pool of 1,000" says.
    await poolReady(subject, c, namespace, sizes.pool, fillTimeout);
    await quiet(controller.pid);

    const burst = names('burst', sizes.pool);
    const burstSent = new Map<string, number>();
    const [apiBefore, ctlBefore] = [cpuMs(apiserver), cpuMs(controller.pid)];
    await createMany(
      [...burst.entries()],
      async ([i, name]) => {
        burstSent.set(name, performance.now());
        await subject.claim(c, namespace, name, sizes.sequential + i);
      },
      BURST_IN_FLIGHT,
    );
    await all('claims Ready', claims, burst, fillTimeout);
    const [apiAfter, ctlAfter] = [cpuMs(apiserver), cpuMs(controller.pid)];
    const launched = burst.map((name) => claims.launchType.get(name));
    return {
      ok: true,
      sequential: series(sequentialSent, claims.at),
      burst: series(burstSent, claims.at),
      poolFillMs,
      cpuPerClaimMs: (ctlAfter - ctlBefore) / sizes.pool,
      apiserverCpuMs: apiAfter - apiBefore,
      coldInBurst: launched.every((t) => t === undefined)
        ? null
        : launched.filter((t) => t === 'Cold').length,
    };
  } catch (error: unknown) {
    const reason = error instanceof Error ? error.message : String(error);
    if (error instanceof PoolNotServed)
      return { ok: false, failed: false, reason: `not available: ${reason}` };
    return { ok: false, failed: true, reason: `failed: ${reason}` };
  } finally {
    claims.stop();
    await controller?.stop();
    // The namespace stays (as in the peer bench): its sweep would land in the next subject's figures.
  }
}
