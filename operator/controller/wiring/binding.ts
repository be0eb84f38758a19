/**
 * The SandboxClaim reconciler's wiring, beside the Sandbox reconciler's (manager.ts): its own cache (claims,
 * pools, and the pool- or claim-labelled Sandboxes), its own work queue keyed by claim, and its own runner, started
 * when this replica leads and drained on shutdown with the other.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import {
  API_VERSION,
  GROUP,
  LABELS,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_WARM_POOL,
  VERSION,
} from '../../api/names.ts';
import type { KubeClients } from '../../kube/clients.ts';
import { DEFAULT_BACKOFF, WorkQueue } from '../../runtime/queue.ts';
import { Runner } from '../../runtime/runner.ts';
import type { WatchedResource, WatchSink } from '../../runtime/watcher.ts';
import { BindingCache } from '../binding/cache.ts';
import { kubeBindingPorts } from '../binding/kube-binding-api.ts';
import { reconcileSandboxClaim, type ClaimReconcilerContext } from '../binding/reconciler.ts';
import { Reservations } from '../binding/reservations.ts';

import type { EventRecorder } from '../ports.ts';
import { bindingMetrics } from './binding-metrics.ts';
import { queueMetrics, reconcileMetrics, type Metrics } from './metrics.ts';

export const BINDING_CONTROLLER = 'sandboxclaim';

/** Five lowercase alphanumerics, as a generateName suffix. */
const suffix = () => {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...randomBytes(5)].map((byte) => alphabet[byte % alphabet.length]).join('');
};

export function bindingController(
  clients: KubeClients,
  events: EventRecorder,
  metrics: Metrics,
  namespace: string | undefined,
  log: Logger,
) {
  const queue = new WorkQueue(DEFAULT_BACKOFF, queueMetrics(metrics, BINDING_CONTROLLER));
  const cache = new BindingCache((key) => queue.add(key));
  const ctx: ClaimReconcilerContext = {
    cache,
    ports: kubeBindingPorts(clients, events),
    now: () => new Date(),
    suffix,
    recorder: bindingMetrics(metrics.registry),
    written: new Map(),
    reservations: new Reservations(),
  };
  const runner = new Runner(
    queue,
    (key, reconcileLog) => reconcileSandboxClaim(ctx, key, reconcileLog),
    log.child({ controller: BINDING_CONTROLLER }),
    reconcileMetrics(metrics, BINDING_CONTROLLER),
  );
  const scope = namespace ? `/namespaces/${namespace}` : '';
  const ns = namespace ? { namespace } : {};
  const sandboxes = (name: string, labelSelector: string): WatchedResource => ({
    name,
    apiVersion: API_VERSION,
    kind: SANDBOX.kind,
    path: `/apis/${GROUP}/${VERSION}${scope}/${SANDBOX.plural}`,
    labelSelector,
    ...ns,
  });
  const sinks: [WatchedResource, WatchSink][] = [
    [
      {
        name: SANDBOX_CLAIM.plural,
        apiVersion: API_VERSION,
        kind: SANDBOX_CLAIM.kind,
        path: `/apis/${GROUP}/${VERSION}${scope}/${SANDBOX_CLAIM.plural}`,
        ...ns,
      },
      cache.claimSink,
    ],
    [
      {
        name: `${SANDBOX_WARM_POOL.plural} (binding)`,
        apiVersion: API_VERSION,
        kind: SANDBOX_WARM_POOL.kind,
        path: `/apis/${GROUP}/${VERSION}${scope}/${SANDBOX_WARM_POOL.plural}`,
        ...ns,
      },
      cache.poolSink,
    ],
    [sandboxes('sandboxes (warm pools)', LABELS.warmPool), cache.poolSandboxSink],
    [sandboxes('sandboxes (sandbox claims)', LABELS.sandboxClaim), cache.claimedSandboxSink],
  ];
  return {
    sinks,
    cache,
    start(workers: number) {
      runner.start(workers);
      for (const key of cache.claimKeys()) queue.add(key);
    },
    async stop() {
      queue.shutDown();
      await runner.drained();
    },
  };
}
