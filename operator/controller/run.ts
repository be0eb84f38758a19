// PLACEHOLDER until the controller issue lands: connects, logs that it is connected, and watches
// Sandboxes with a client-node informer until `signal` aborts. The real controller replaces this body.
import { once } from 'node:events';
import {
  ADD,
  CustomObjectsApi,
  DELETE,
  ERROR,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  makeInformer,
  UPDATE,
  VersionApi,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { GROUP, SANDBOX, VERSION } from '../api/names.ts';

export interface RunOperatorOptions {
  readonly kubeconfig: KubeConfig;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}

const RESTART_AFTER_ERROR_MS = 5_000;

export async function runOperator({ kubeconfig, logger, signal }: RunOperatorOptions): Promise<void> {
  const server = kubeconfig.getCurrentCluster()?.server;
  const version = await kubeconfig.makeApiClient(VersionApi).getCode();
  logger.info({ server, serverVersion: version.gitVersion }, 'connected to the API server');

  const objects = kubeconfig.makeApiClient(CustomObjectsApi);
  const informer = makeInformer<KubernetesObject>(
    kubeconfig,
    `/apis/${GROUP}/${VERSION}/${SANDBOX.plural}`,
    async () =>
      (await objects.listClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: SANDBOX.plural,
      })) as KubernetesListObject<KubernetesObject>,
  );
  const key = (o: KubernetesObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  informer.on(ADD, (o) => {
    logger.info({ sandbox: key(o) }, 'sandbox added');
  });
  informer.on(UPDATE, (o) => {
    logger.info({ sandbox: key(o), resourceVersion: o.metadata?.resourceVersion }, 'sandbox updated');
  });
  informer.on(DELETE, (o) => {
    logger.info({ sandbox: key(o) }, 'sandbox deleted');
  });
  // The client-node informer stops for good on an error other than 410 Gone: restart it.
  informer.on(ERROR, (error: unknown) => {
    if (signal.aborted) return;
    logger.warn({ err: error }, `sandbox watch failed; restarting in ${RESTART_AFTER_ERROR_MS / 1000} s`);
    setTimeout(() => {
      if (!signal.aborted)
        void informer.start().catch((err: unknown) => logger.error({ err }, 'sandbox watch restart failed'));
    }, RESTART_AFTER_ERROR_MS);
  });
  await informer.start();
  logger.info(
    { resource: `${SANDBOX.plural}.${GROUP}` },
    'watching Sandboxes (placeholder operator: reconciliation is not wired in yet)',
  );
  if (!signal.aborted) await once(signal, 'abort');
  await informer.stop();
  logger.info('stopped watching Sandboxes');
}
