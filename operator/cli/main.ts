// The operator's entry point, the one the image runs: the controller manager against the cluster in
// KUBECONFIG, or the pod's own when it runs in one. `npm start` runs this same entry, after starting a local
// control plane when no cluster is configured (tools/local-cluster/cli/start.ts).
// Ctrl-C / SIGTERM stops the operator gracefully; a second one exits at once.
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { runOperator } from '../controller/wiring/run.ts';
import { createLogger } from './logger.ts';

const DUPLICATE_SIGNAL_MS = 1_000;

const USAGE = `Usage: node dist/bundle/main.mjs [operator flags]

Runs sandbox-operator against the cluster in KUBECONFIG, or, inside a pod, against its own cluster.
Flags and their SANDBOX_OPERATOR_* environment variables: operator/controller/wiring/config.ts.
In a checkout, \`npm start\` runs it on a local control plane when no cluster is configured.
`;

/**
 * A parent that started this process with an IPC channel (`npm start`'s launcher) hears once that the
 * operator reconciles, so it can say "ready" only then; the channel never keeps the process alive.
 */
process.channel?.unref();
function tellParent(): void {
  process.send?.({ kind: 'ready' });
}

class NoClusterError extends Error {
  readonly kind = 'NoCluster';
}

function connect(env: NodeJS.ProcessEnv, logger: Logger): KubeConfig {
  const kubeconfig = new KubeConfig();
  const paths = env['KUBECONFIG'];
  if (paths !== undefined && paths !== '') {
    kubeconfig.loadFromDefault(); // honours KUBECONFIG, including several paths joined by ':'
    logger.info(
      { kubeconfig: paths, context: kubeconfig.getCurrentContext() },
      'using the cluster in KUBECONFIG',
    );
    return kubeconfig;
  }
  const host = env['KUBERNETES_SERVICE_HOST'];
  if (host !== undefined && host !== '') {
    kubeconfig.loadFromCluster();
    logger.info('using the in-cluster service account');
    return kubeconfig;
  }
  throw new NoClusterError(
    'no cluster configured: set KUBECONFIG, or run in a pod; in a checkout, `npm start` starts a local control plane',
  );
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
  const logger = createLogger({ name: 'sandbox-operator' });
  const stop = new AbortController();
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) {
      // One Ctrl-C arrives twice: from the terminal and relayed by npm's launcher. Only a later one forces.
      if (Date.now() - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    firstSignalAt = Date.now();
    logger.info({ signal }, 'stopping');
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const kubeconfig = connect(process.env, logger);
    // Its last line is the manager's "operator stopped"; under `npm start` the launcher's "stopped" ends all.
    await runOperator({ kubeconfig, logger, signal: stop.signal, onReady: tellParent });
  } catch (error) {
    logger.fatal({ err: error }, 'sandbox-operator failed');
    process.exitCode = 1;
  }
}

// What failed before the logger existed (a bad SANDBOX_OPERATOR_LOG_FORMAT): said in the default format.
main().catch((error: unknown) => {
  createLogger({ name: 'sandbox-operator', format: 'auto' }).fatal({ err: error }, 'sandbox-operator failed');
  process.exitCode = 1;
});
