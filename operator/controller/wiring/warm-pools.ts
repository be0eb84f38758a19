/**
 * The warm pools' controller (docs/warm-pools.md), beside the Sandbox one: its cache (three watches), its own
 * work queue of pool keys, and a runner of `reconcileWarmPool`. The manager adds its watches to the ones it
 * waits on, starts it while leading, and drains it on the way out.
 */
import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import type { KubeClients } from '../../kube/clients.ts';
import { DEFAULT_BACKOFF, WorkQueue } from '../../runtime/queue.ts';
import { Runner } from '../../runtime/runner.ts';
import type { WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import { kubeWarmPoolApi } from '../adapters/warm-pool-api.ts';
import { WarmPoolCache, warmPoolResources } from '../cache/warm-pools.ts';
import { Expectations } from '../warm-pool/expectations.ts';
import type { WarmPoolApi } from '../warm-pool/ports.ts';
import { reconcileWarmPool } from '../warm-pool/turn.ts';
import type { Metrics } from './metrics.ts';
import { warmPoolMetrics } from './warm-pool-metrics.ts';

/** Sandboxes one pool's turn makes at most before it comes back (a pool of 1,000 fills in 20 turns). */
const CREATES_PER_TURN = 50;
/** Random draws for sandbox names, from the system's generator (a pool's names must not repeat by seed). */
const RANDOM_STEPS = 1 << 30;

export type WarmPoolController = {
  readonly sinks: readonly [WatchedResource, WatchSink][];
  start(workers: number): void;
  /** Stops handing out pool keys and waits for the turns in flight. */
  drain(): Promise<void>;
};

export function warmPoolController(options: {
  readonly clients: KubeClients;
  readonly namespace: string | undefined;
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly decorateApi?: (api: WarmPoolApi) => WarmPoolApi;
}): WarmPoolController {
  const observers = warmPoolMetrics(options.metrics);
  const queue = new WorkQueue(DEFAULT_BACKOFF, observers.queue);
  const cache = new WarmPoolCache((key) => queue.add(key));
  const resources = warmPoolResources(options.namespace);
  const api = kubeWarmPoolApi(options.clients);
  const ctx = {
    cache,
    api: options.decorateApi ? options.decorateApi(api) : api,
    expectations: new Expectations(),
    now: () => new Date(),
    random: () => randomInt(RANDOM_STEPS) / RANDOM_STEPS,
    observer: observers.pools,
    createsPerTurn: CREATES_PER_TURN,
  };
  const log = options.log.child({ controller: 'sandboxwarmpool' });
  const runner = new Runner(
    queue,
    (key, reconcileLog) => reconcileWarmPool(ctx, key, reconcileLog.child({ pool: key })),
    log,
    observers.runner,
  );
  return {
    sinks: [
      [resources.pools, cache.pools],
      [resources.templates, cache.templates],
      [resources.sandboxes, cache.sandboxes],
    ],
    start(workers) {
      runner.start(workers);
      for (const key of cache.poolKeys()) queue.add(key);
    },
    async drain() {
      queue.shutDown();
      await runner.drained();
    },
  };
}
