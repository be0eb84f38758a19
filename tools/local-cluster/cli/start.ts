/**
 * `npm start`: runs the operator (operator/cli/main.ts, the entry point the image runs) against the cluster in
 * KUBECONFIG or the pod's; with none configured, or with --local, against a local control plane it starts
 * first and stops last. The operator is its own process, as in production: this launcher only prepares the
 * cluster and the operator's identity, relays signals, and stops the control plane once the operator exited.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import {
  OPERATOR_USER,
  TOOLS,
  cacheRoot,
  formatBuildEvent,
  provisionOperatorIdentity,
  registerOperatorReview,
  startLocalCluster,
  type LocalCluster,
} from '../index.ts';
import { operatorImageOnNode } from '../images/on-node.ts';
import { launcherLogger } from './log.ts';

const REPOSITORY = fileURLToPath(new URL('../../../', import.meta.url));
const OPERATOR_MAIN = fileURLToPath(new URL('../../../operator/cli/main.ts', import.meta.url));
/** One Ctrl-C arrives twice: from the terminal and relayed by npm. Only a later one forces. */
const DUPLICATE_SIGNAL_MS = 1_000;

const USAGE = `Usage: npm start [-- --local] [-- operator flags]

Runs sandbox-operator. With KUBECONFIG set (or inside a pod) it uses that cluster; otherwise, or with
--local, it starts a local control plane (etcd, kube-apiserver, kube-controller-manager, kwok built from
Go modules and cached in $SANDBOX_OPERATOR_CACHE or ~/.cache/sandbox-operator), installs the CRDs
and runs the operator against it. Other arguments go to the operator (operator/controller/wiring/config.ts).
`;

const configured = (value: string | undefined) => value !== undefined && value !== '';

function banner(cluster: LocalCluster): string {
  return [
    '',
    `Local control plane ready: kube-apiserver ${TOOLS['kube-apiserver'].version} at ${cluster.server}`,
    'Point kubectl at it (from another terminal):',
    `  export KUBECONFIG=${cluster.kubeconfigPath}`,
    '  kubectl get sandboxes -A',
    `No kubectl? The one built for this cluster is ${cluster.binaries.kubectl}`,
    cluster.realNode === null
      ? `No real node (${cluster.realNodeSkipReason ?? ''}): sandbox pods stay Pending; fake nodes kwok-node-0..2 run pods that set spec.nodeName.`
      : `Sandbox pods run as real containers on node ${cluster.realNode.name} (shell image ${cluster.realNode.images.shell}); kwok-node-0..2 run pods that set spec.nodeName.`,
    ...(cluster.realNode === null
      ? []
      : [
          `The examples' image ${cluster.realNode.images.exampleStandIn} is a local stand-in on that node (a busybox shell that idles, and says so in its log); a real cluster pulls the real one.`,
        ]),
    `Logs of each component: ${cluster.tempDir}`,
    `The operator runs as ${OPERATOR_USER}, the chart's ServiceAccount; its deletes pass its delete review, as with the chart's deleteReview.`,
    'Ctrl-C stops the operator and the control plane.',
    '',
  ].join('\n');
}

/**
 * The local control plane, and the environment the operator runs in there: the chart's ServiceAccount, which
 * the pod-protection policy trusts (the admin kubeconfig in the banner is the user's, and its `kubectl delete
 * pod` of a sandbox pod is refused), and, with a real node, the sidecar image imported into its containerd.
 */
type Local = {
  readonly cluster: LocalCluster;
  readonly env: NodeJS.ProcessEnv;
  /** Flags the operator needs there: serving the delete review the local control plane registered. */
  readonly operatorFlags: readonly string[];
};

async function startLocal(logger: Logger): Promise<Local> {
  logger.info('no cluster configured (KUBECONFIG unset, not in a pod): starting the local control plane');
  const cluster = await startLocalCluster({
    logger: logger.child({ component: 'local-cluster' }),
    realNode: { taint: false },
  });
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: await provisionOperatorIdentity(cluster) };
    delete env['KUBERNETES_SERVICE_HOST'];
    const review = await registerOperatorReview(cluster);
    logger.info(
      { webhook: review.name },
      "the operator's delete review registered, as the chart's deleteReview does (the operator serves it on loopback)",
    );
    if (cluster.realNode !== null && !configured(env['SANDBOX_OPERATOR_SIDECAR_IMAGE'])) {
      // The sidecar is the operator image: built from the Dockerfile, imported, and named to the operator.
      env['SANDBOX_OPERATOR_SIDECAR_IMAGE'] = await operatorImageOnNode(
        cacheRoot(),
        cluster.realNode.containerdSocket,
        (event) => logger.info({ step: event.step, phase: event.phase }, formatBuildEvent(event)),
      );
      logger.info({ image: env['SANDBOX_OPERATOR_SIDECAR_IMAGE'] }, 'sidecar image on the real node');
    }
    return { cluster, env, operatorFlags: review.operatorFlags };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/**
 * The operator's own process, on this terminal; tsx runs its TypeScript as it is. Its IPC channel carries one
 * message, `{ kind: 'ready' }`, once it reconciles (operator/cli/main.ts).
 */
function startOperator(args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', import.meta.resolve('tsx'), OPERATOR_MAIN, ...args], {
    cwd: REPOSITORY,
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env,
  });
}

/** Resolves once the operator says it reconciles, or it exits first (then the caller sees its exit). */
function untilReady(operator: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      operator.off('message', onMessage);
      operator.off('exit', done);
      resolve();
    };
    const onMessage = (message: unknown) => {
      if ((message as { kind?: unknown } | null)?.kind === 'ready') done();
    };
    operator.on('message', onMessage);
    operator.once('exit', done);
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
  const logger = launcherLogger();
  let operator: ChildProcess | undefined;
  const stop = new AbortController();
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) {
      if (Date.now() - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
      logger.warn({ signal }, 'second signal: exiting now (the exit hook kills the local control plane)');
      operator?.kill('SIGKILL');
      process.exit(130);
    }
    stop.abort();
    firstSignalAt = Date.now();
    logger.info({ signal }, 'stopping');
    // A Ctrl-C reached the operator too (one process group); a SIGTERM to npm alone did not.
    operator?.kill('SIGTERM');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const local =
    argv.includes('--local') ||
    !(configured(process.env['KUBECONFIG']) || configured(process.env['KUBERNETES_SERVICE_HOST']))
      ? await startLocal(logger)
      : undefined;
  try {
    if (!stop.signal.aborted) {
      operator = startOperator(
        [...(local?.operatorFlags ?? []), ...argv.filter((arg) => arg !== '--local')],
        local?.env ?? process.env,
      );
      const exited = once(operator, 'exit');
      // The banner says the cluster is ready for kubectl only once the operator reconciles: a Sandbox
      // applied before that would be deleted without its finalizer, with no decision.
      await untilReady(operator);
      if (local && operator.exitCode === null && operator.signalCode === null) {
        // pino writes asynchronously: let its lines out first so the banner is not buried among them.
        await new Promise<void>((resolve) => logger.flush(() => resolve()));
        process.stdout.write(banner(local.cluster));
      }
      const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
      // Ended by a stop signal without handling it is a stop too; any other signal (the OOM killer's) is not.
      process.exitCode = code ?? (signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : 1);
    }
  } finally {
    await local?.cluster.stop();
  }
  logger.info('stopped');
}

main().catch((error: unknown) => {
  launcherLogger().fatal({ err: error }, 'npm start failed');
  process.exitCode = 1;
});
