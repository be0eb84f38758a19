// `npm start`: run the operator against the configured cluster (KUBECONFIG, or in-cluster), or, with
// none configured (or with --local), against an embedded local control plane it starts and stops.
// Ctrl-C / SIGTERM stops the operator, then the control plane; a second Ctrl-C exits at once.
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { runOperator } from '../controller/wiring/run.ts';
import type { LocalCluster } from '../../tools/local-cluster/index.ts';
import { createLogger } from './logger.ts';

// The local control plane (building Go modules, images, a real node) is loaded only when it is started: an
// operator run against a cluster, as the image always is, does not pay for loading it at start-up. The
// bundle the image runs leaves it out (scripts/bundle-operator.mjs): there the import fails, said plainly.
const localCluster = () => import('../../tools/local-cluster/index.ts').catch(withoutLocalCluster);

function withoutLocalCluster(error: unknown): never {
  if ((error as NodeJS.ErrnoException | null)?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  throw new Error(
    'this build has no local control plane (the image runs against a cluster): set KUBECONFIG, run it in a ' +
      'pod, or run `npm start` in a checkout for a local one',
    { cause: error },
  );
}

type Target =
  | { readonly kind: 'kubeconfig'; readonly paths: string }
  | { readonly kind: 'in-cluster' }
  | { readonly kind: 'local' };

const DUPLICATE_SIGNAL_MS = 1_000;

const USAGE = `Usage: npm start [-- --local]

Runs sandbox-operator. With KUBECONFIG set (or inside a pod) it uses that cluster; otherwise, or with
--local, it starts a local control plane (etcd, kube-apiserver, kube-controller-manager, kwok built from
Go modules and cached in $SANDBOX_OPERATOR_CACHE or ~/.cache/sandbox-operator), installs the CRDs
and runs the operator against it.
`;

function chooseTarget(argv: readonly string[], env: NodeJS.ProcessEnv): Target {
  if (argv.includes('--local')) return { kind: 'local' };
  const kubeconfig = env['KUBECONFIG'];
  if (kubeconfig !== undefined && kubeconfig !== '') return { kind: 'kubeconfig', paths: kubeconfig };
  if (env['KUBERNETES_SERVICE_HOST'] !== undefined && env['KUBERNETES_SERVICE_HOST'] !== '')
    return { kind: 'in-cluster' };
  return { kind: 'local' };
}

function banner(
  cluster: LocalCluster,
  { TOOLS, OPERATOR_RELEASE }: Awaited<ReturnType<typeof localCluster>>,
): string {
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
    `Logs of each component: ${cluster.tempDir}`,
    `The operator runs as system:serviceaccount:${OPERATOR_RELEASE.namespace}:${OPERATOR_RELEASE.name}, the chart's ServiceAccount.`,
    'Ctrl-C stops the operator and the control plane.',
    '',
  ].join('\n');
}

async function connect(
  target: Target,
  logger: Logger,
): Promise<{ kubeconfig: KubeConfig; cluster: LocalCluster | null }> {
  const kubeconfig = new KubeConfig();
  switch (target.kind) {
    case 'kubeconfig':
      kubeconfig.loadFromDefault(); // honours KUBECONFIG, including several paths joined by ':'
      logger.info(
        { kubeconfig: target.paths, context: kubeconfig.getCurrentContext() },
        'using the cluster in KUBECONFIG',
      );
      return { kubeconfig, cluster: null };
    case 'in-cluster':
      kubeconfig.loadFromCluster();
      logger.info('using the in-cluster service account');
      return { kubeconfig, cluster: null };
    case 'local': {
      logger.info('no cluster configured (KUBECONFIG unset, not in a pod): starting the local control plane');
      const local = await localCluster();
      // With a real node (root, containerd: docs/real-node.md) sandbox pods run as real containers.
      const cluster = await local.startLocalCluster({
        logger: logger.child({ component: 'local-cluster' }),
        realNode: { taint: false },
      });
      // The operator runs as the chart's ServiceAccount, which the pod-protection policy trusts; the admin
      // kubeconfig in the banner is the user's, and its `kubectl delete pod` of a sandbox pod is refused.
      try {
        kubeconfig.loadFromFile(await local.provisionOperatorIdentity(cluster));
        if (cluster.realNode !== null) await putSidecarImageOnNode(cluster.realNode.containerdSocket, logger);
      } catch (error) {
        await cluster.stop();
        throw error;
      }
      // pino writes asynchronously: let its lines out first so the banner is not buried among them.
      await new Promise<void>((resolve) => {
        logger.flush(() => {
          resolve();
        });
      });
      process.stdout.write(banner(cluster, local));
      return { kubeconfig, cluster };
    }
  }
}

/** The sidecar is the operator image: built from the Dockerfile, imported, and named to the operator. */
async function putSidecarImageOnNode(containerdSocket: string, logger: Logger): Promise<void> {
  const [{ operatorImageOnNode }, { cacheRoot, formatBuildEvent }] = await Promise.all([
    import('../../tools/local-cluster/images/on-node.ts').catch(withoutLocalCluster),
    localCluster(),
  ]);
  const tag = await operatorImageOnNode(cacheRoot(), containerdSocket, (event) => {
    logger.info({ step: event.step, phase: event.phase }, formatBuildEvent(event));
  });
  process.env['SANDBOX_OPERATOR_SIDECAR_IMAGE'] ??= tag;
  logger.info({ image: process.env['SANDBOX_OPERATOR_SIDECAR_IMAGE'] }, 'sidecar image on the real node');
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
      // One Ctrl-C arrives twice: from the terminal and relayed by npm/tsx. Only a later one forces.
      if (Date.now() - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
      logger.warn({ signal }, 'second signal: exiting now (the exit hook kills the local control plane)');
      process.exit(130);
    }
    firstSignalAt = Date.now();
    logger.info({ signal }, 'stopping');
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const { kubeconfig, cluster } = await connect(chooseTarget(process.argv.slice(2), process.env), logger);
  try {
    await runOperator({ kubeconfig, logger, signal: stop.signal });
  } finally {
    if (cluster !== null) await cluster.stop();
  }
  logger.info('stopped');
}

main().catch((error: unknown) => {
  createLogger({ name: 'sandbox-operator', format: 'auto' }).fatal({ err: error }, 'sandbox-operator failed');
  process.exitCode = 1;
});
