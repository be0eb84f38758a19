/**
 * The operator, as its entry point (operator/cli/main.ts) runs it: reads flags and environment (config.ts) and runs the
 * controller manager until `signal` aborts.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { loadConfig } from './config.ts';
import { runManager } from './manager.ts';

export interface RunOperatorOptions {
  readonly kubeconfig: KubeConfig;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  /** Operator flags (see config.ts); default: this process's arguments. */
  readonly argv?: readonly string[];
  /** Called once the operator reconciles (caches synced, leading). */
  readonly onReady?: () => void;
}

export async function runOperator({
  kubeconfig,
  logger,
  signal,
  argv,
  onReady,
}: RunOperatorOptions): Promise<void> {
  const config = loadConfig(argv ?? process.argv.slice(2), process.env);
  logger.level = config.logLevel;
  logger.info(
    {
      server: kubeconfig.getCurrentCluster()?.server,
      workers: config.workers,
      leaderElect: config.leaderElect,
    },
    'starting sandbox-operator',
  );
  await runManager({
    kubeConfig: kubeconfig,
    config,
    log: logger,
    signal,
    ...(onReady ? { onReconciling: onReady } : {}),
  });
}
