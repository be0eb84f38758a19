/**
 * Wires the controller: watchers fill the store, the store's events fill the queue, the runner's workers
 * reconcile while this replica leads. Stops gracefully when `signal` aborts: no new reconciles, in-flight
 * ones finish (up to 30 s), the lease is released, watchers and the probe server close.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { INDEX_LIMITS } from '../../api/limits.ts';
import type { OperatorConfig } from './config.ts';
import type { ReconcilerContext } from '../context.ts';
import { failpoints } from '../deletion/failpoints.ts';
import { WALK_LANES } from '../walk-lane/lane.ts';
import { walkLane } from './legacy-lane.ts';
import type { ControllerPorts } from '../ports.ts';
import { kubeClients } from '../../kube/clients.ts';
import { kubeEventRecorder } from '../adapters/events.ts';
import { kubeGuardApi, kubeNamespaceApi, kubePodApi } from '../adapters/pod-api.ts';
import { kubeClaimApi } from '../adapters/claim-api.ts';
import { claimResource, HeldClaims } from '../cache/held-claims.ts';
import { kubeNetworkPolicyApi } from '../adapters/network-policy-api.ts';
import { networkWatches } from '../cache/network-watches.ts';
import { kubeReferenceApi } from '../adapters/reference-api.ts';
import { kubeReviewReads } from '../adapters/review-reads.ts';
import { kubeSandboxApi } from '../adapters/sandbox-api.ts';
import { DEFAULT_LEASE_TIMING, LeaderElector } from '../../runtime/leader.ts';
import {
  admissionFix,
  admissionParamsRef,
  checkIdentity,
  identityAdvice,
  reportIdentity,
} from './identity.ts';
import { checkReaperImage } from './reaper-image.ts';
import { CONTROLLER, createMetrics, queueMetrics, reconcileMetrics } from './metrics.ts';
import { registerStateGauges } from './state-metrics.ts';
import { serveEndpoints } from './metrics-serving.ts';
import { serveReview } from './review-serving.ts';
import { DEFAULT_BACKOFF, WorkQueue } from '../../runtime/queue.ts';
import { Runner } from '../../runtime/runner.ts';
import { reconcileSandbox } from '../sandbox-reconciler.ts';
import { Misconfigurations, observingMisconfigurations } from '../misconfiguration.ts';
import { ClusterStore } from '../cache/store.ts';
import { Watcher, type WatchedResource, type WatchSink } from '../../runtime/watcher.ts';
import { namespaceWatches } from '../cache/namespace-watches.ts';
import { managedNamespaces } from '../cache/managed-namespaces.ts';
import { NodeDrains, nodeDrainResource } from '../cache/node-drains.ts';
import { storeResources } from '../cache/store-resources.ts';
import { bindingController } from './binding.ts';
import { warmPoolController } from './warm-pools.ts';

export type ManagerOptions = {
  readonly kubeConfig: KubeConfig;
  readonly config: OperatorConfig;
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** Called once the probe server listens (tests use the address). */
  readonly onListening?: (port: number) => void;
  /** Called once this replica reconciles (caches synced, leading): a supervising parent's readiness. */
  readonly onReconciling?: () => void;
  /** Wraps the Kubernetes ports, e.g. to observe or pause them in tests. */
  readonly decoratePorts?: (ports: ControllerPorts) => ControllerPorts;
};

export async function runManager(options: ManagerOptions): Promise<void> {
  const { kubeConfig, config, log, signal, onListening } = options;
  const metrics = createMetrics();
  const clients = kubeClients(kubeConfig, ({ code, method, host, seconds }) => {
    metrics.restRequests.inc({ code, method, host });
    metrics.restLatency.observe({ verb: method, host }, seconds);
  });
  const queue = new WorkQueue(DEFAULT_BACKOFF, queueMetrics(metrics));
  metrics.inFlight.since = () => queue.inFlightSince();
  const store = new ClusterStore((keys, finishing) => {
    for (const key of keys)
      if (finishing === true) queue.addFirst(key);
      else queue.add(key);
  });
  // A namespace's PodSecurity level and opt-in pick the shell reaper's mode; a change may let its pods through.
  const namespaces = namespaceWatches(config.namespace, (namespace) => {
    for (const key of store.sandboxKeys()) if (key.startsWith(`${namespace}/`)) queue.add(key);
  });
  // The per-namespace opt-in: a namespace labelled (or unlabelled) since has its sandboxes looked at again.
  const managed = managedNamespaces(config.managedNamespaceLabel, config.namespace, (namespace) => {
    for (const key of store.sandboxKeys()) if (key.startsWith(`${namespace}/`)) queue.add(key);
  });
  // Workspace claims that hold our finalizer: a change brings their sandbox's turn.
  const claims = new HeldClaims((key) => queue.add(key));
  // The warm pools' controller: its own watches and queue (docs/warm-pools.md).
  const pools = warmPoolController({ clients, namespace: config.namespace, metrics, log });
  // Each sandbox's NetworkPolicy and the API server's endpoints it opens: cached, so a turn whose policy
  // stands reads neither; a change to either brings the turns that put the policies back.
  const network = networkWatches(
    config.namespace,
    (key) => queue.add(key),
    () => store.sandboxKeys(),
  );
  const sinks: [WatchedResource, WatchSink][] = [
    ...storeResources(config.namespace).map(([resource, sink]): [WatchedResource, WatchSink] => [
      resource,
      store[sink],
    ]),
    ...namespaces.sinks,
    ...managed.sinks,
    ...network.labelSinks,
    [claimResource(config.namespace), claims],
  ];
  const watcherOf = <T>(resource: WatchedResource, sink: WatchSink<T>) =>
    new Watcher(kubeConfig, resource, sink, log.child({ component: 'watcher' }), {
      onRestart: (name, reason) => metrics.watchRestarts.inc({ resource: name, reason }),
    });
  const events = kubeEventRecorder(clients, 'sandbox-operator', log);
  // SandboxClaims: their own cache, queue and workers (binding.ts), beside the Sandboxes'.
  const binding = bindingController(clients, events, metrics, config.namespace, log);
  // The policies' watch gates readiness as the store's do (the turn reads its cache once it has listed).
  const policyWatcher = watcherOf(network.policyResource, network.policies);
  network.policies.watchedBy(policyWatcher);
  const watchers: Pick<Watcher, 'isSynced' | 'resourceName' | 'hasSynced' | 'run'>[] = [
    ...sinks.map(([resource, sink]) => watcherOf(resource, sink)),
    policyWatcher,
  ];
  // The pools' and claims' caches gate only their own controllers: a cluster without their CRDs (a release
  // upgraded before its CRDs: helm upgrade does not install new ones) still has its Sandboxes reconciled, and
  // the watcher says the missing CRD once, with the fix.
  const poolWatchers = pools.sinks.map(([resource, sink]) => watcherOf(resource, sink));
  const bindingWatchers = binding.sinks.map(([resource, sink]) => watcherOf(resource, sink));
  // A drain's start or end may change DisruptionBlocked on the sandboxes with pods on that node. The node
  // watch only informs (it protects nothing): readiness and the start do not wait on it, and a 403 on Nodes
  // is said once by the watcher while everything else goes on.
  const nodes = new NodeDrains((node) => {
    for (const key of store.sandboxKeys())
      if (store.pods(key).some((pod) => pod.node === node)) queue.add(key);
  });
  const nodeWatcher = watcherOf(nodeDrainResource, nodes);
  // The API server's slice gates nothing: until it lists, each turn reads it live, as before it was watched.
  const sliceWatcher = watcherOf(network.sliceResource, network.endpoints);
  network.endpoints.watchedBy(sliceWatcher);
  const misconfigurations = new Misconfigurations();
  const ctx: ReconcilerContext = {
    store,
    misconfigurations,
    ports: (options.decoratePorts ?? ((ports: ControllerPorts) => ports))({
      sandboxes: kubeSandboxApi(clients),
      references: kubeReferenceApi(clients),
      pods: kubePodApi(clients),
      claims: kubeClaimApi(clients),
      guards: kubeGuardApi(clients),
      networkPolicies: kubeNetworkPolicyApi(clients, network),
      namespaces: kubeNamespaceApi(clients),
      events,
    }),
    legacy: walkLane(config, {
      lanes: WALK_LANES,
      now: () => new Date(),
      enqueue: (key) => queue.add(key),
      onOutcome: (outcome) => metrics.reconciliations.inc({ outcome }),
    }),
    sidecar: {
      image: config.sidecarImage,
      serviceAccountName: config.sidecarServiceAccount,
      ...namespaces.settings,
    },
    limits: INDEX_LIMITS,
    now: () => new Date(),
    timing: {
      resyncMs: config.resyncMs,
      blockedRecheckMs: config.blockedRecheckMs,
      legacyRetryMs: config.legacyRetryMs,
      legacyRetryWhileDeletingMs: config.legacyRetryWhileDeletingMs,
    },
    recorder: {
      onDecision: (verdict, evidence) => metrics.decisions.inc({ verdict, evidence }),
    },
    failpoint: failpoints(config.failpoints),
    clusterDns: { ...config.clusterDns, addresses: config.clusterDnsAddress },
    nodes,
    claims,
    ...(managed.unmanaged ? { unmanaged: managed.unmanaged } : {}),
  };

  registerStateGauges(metrics.registry, () => cachedSandboxes(store));

  const watching = new AbortController();
  const watchRuns = [...watchers, ...poolWatchers, ...bindingWatchers, nodeWatcher, sliceWatcher].map(
    (watcher) => watcher.run(watching.signal),
  );
  let stopping = false;
  const params = admissionParamsRef(config.admissionParams);
  const identity = await checkIdentity(clients.json, params);
  reportIdentity(identity, log);
  await checkReaperImage(clients.json, params, config.sidecarImage, log);
  const server = await serveEndpoints(
    config,
    clients.json,
    metrics.registry,
    {
      healthy: () => !stopping,
      notReady: () => {
        if (identity.kind === 'NotTrusted')
          return `not trusted to release sandbox pods: ${identityAdvice(identity) ?? ''}`;
        const unsynced = watchers
          .filter((watcher) => !watcher.isSynced)
          .map((watcher) => watcher.resourceName);
        return unsynced.length === 0 ? undefined : `caches not synced: ${unsynced.join(', ')}`;
      },
    },
    log,
  );
  const reads = kubeReviewReads(clients);
  const review = await serveReview(config, kubeReferenceApi(clients), reads, INDEX_LIMITS, log).catch(
    (error: unknown) => {
      server.close();
      throw error;
    },
  );
  server.on('close', () => review?.close());
  const address = server.address();
  if (address && typeof address === 'object') onListening?.(address.port);
  metrics.cache.counts = () => store.counts;

  const leader = config.leaderElect
    ? new LeaderElector(
        clients,
        {
          namespace: config.leaseNamespace,
          name: config.leaseName,
          identity: config.identity,
          ...DEFAULT_LEASE_TIMING,
        },
        log,
      )
    : undefined;
  const runner = new Runner(
    queue,
    (key, reconcileLog) => reconcileSandbox(ctx, key, reconcileLog),
    log,
    observingMisconfigurations(reconcileMetrics(metrics), misconfigurations, () =>
      admissionFix(identity, params),
    ),
    { misconfiguredRecheckMs: config.resyncMs }, // a misconfiguration is looked at again on the resync
  );

  try {
    await withTimeout(
      Promise.all(watchers.map((w) => w.hasSynced())),
      config.cacheSyncTimeoutMs,
      signal,
      'caches did not sync',
    );
    if (signal.aborted) return;
    log.info({ ...storeCounts(store) }, 'caches synced');
    if (leader && !(await leader.acquire(signal))) return;
    metrics.leader.set({ name: config.leaseName }, 1);
    // Without leader election this replica leads until stopped.
    const leadership = leader ? leader.hold(signal) : new Promise<void>(() => undefined);
    metrics.maxWorkers.set({ controller: CONTROLLER }, config.workers);
    runner.start(config.workers);
    for (const key of store.sandboxKeys()) queue.add(key);
    startWhenSynced(bindingWatchers, signal, () => binding.start(config.workers), log);
    startWhenSynced(poolWatchers, signal, () => pools.start(config.workers), log);
    const { workers, namespace = '(all)', managedNamespaceLabel: managedBy } = config;
    log.info(
      { workers, namespace, managedNamespaceLabel: managedBy || '(every namespace)' },
      'reconciling sandboxes',
    );
    options.onReconciling?.();
    await Promise.race([
      leadership,
      new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    ]);
  } finally {
    stopping = true;
    queue.shutDown();
    await withTimeout(
      Promise.all([runner.drained(), binding.stop(), pools.drain()]),
      config.shutdownGraceMs,
      undefined,
      'in-flight reconciles did not finish',
    ).catch((error: unknown) => log.warn({ err: error }, 'shutdown grace exceeded'));
    log.debug('workers drained');
    metrics.leader.set({ name: config.leaseName }, 0);
    await leader?.release();
    watching.abort();
    log.debug('waiting for watchers');
    await Promise.all(watchRuns);
    log.debug('watchers stopped');
    await new Promise((resolve) => server.close(resolve));
    log.info('operator stopped');
  }
}

const storeCounts = (store: ClusterStore) => store.counts;

function* cachedSandboxes(store: ClusterStore) {
  for (const key of store.sandboxKeys()) {
    const parsed = store.sandbox(key);
    if (parsed?.ok) yield parsed.value;
  }
}

async function withTimeout<T>(
  work: Promise<T>,
  ms: number,
  signal: AbortSignal | undefined,
  message: string,
): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms);
  });
  const aborted = new Promise<undefined>((resolve) =>
    signal?.addEventListener('abort', () => resolve(undefined), { once: true }),
  );
  try {
    return await Promise.race([work, timeout, aborted]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts a controller once its own caches have synced (never, if this replica stops first). */
function startWhenSynced(
  watchers: readonly Watcher[],
  signal: AbortSignal,
  start: () => void,
  log: Logger,
): void {
  void Promise.all(watchers.map((watcher) => watcher.hasSynced())).then(
    () => {
      if (signal.aborted) return;
      log.info({ resources: watchers.map((watcher) => watcher.resourceName) }, 'caches synced');
      start();
    },
    (error: unknown) => log.error({ err: error }, 'a cache never synced; its controller does not start'),
  );
}
