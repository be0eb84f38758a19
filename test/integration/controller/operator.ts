/**
 * Runs the operator in-process for integration tests, as the restricted `sandbox-operator` user under the
 * chart's RBAC, scoped to one namespace so test files do not see each other's sandboxes.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino, type Logger } from 'pino';
import { inject } from 'vitest';
import { setOperatorUsers } from '../../harness/admission.ts';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';
import { runManager } from '../../../operator/controller/wiring/manager.ts';
import type { ControllerPorts } from '../../../operator/controller/ports.ts';
import { ensureBinaries, RESTRICTED_USER } from '@sandbox-operator/local-cluster';
import { kubeConfig, kubectlOk } from '../../harness/kube.ts';

const run = promisify(execFile);
export const OPERATOR_NAMESPACE = 'sandbox-system';

/** Applies the chart's RBAC for the restricted user, and lets that user delete sandbox pods. */
export async function grantOperatorRbac(): Promise<void> {
  const { helm } = await ensureBinaries({ tools: ['helm'] });
  const { stdout } = await run(helm, [
    'template',
    'sandbox-operator',
    'charts/sandbox-operator',
    '--namespace',
    OPERATOR_NAMESPACE,
    '--kube-version',
    '1.36.3',
    '--show-only',
    'templates/rbac.yaml',
    '--set',
    `rbac.extraSubjects[0].kind=User,rbac.extraSubjects[0].name=${RESTRICTED_USER},rbac.extraSubjects[0].apiGroup=rbac.authorization.k8s.io`,
  ]);
  const file = join(tmpdir(), `operator-rbac-${process.pid}.yaml`);
  await writeFile(file, stdout);
  await kubectlOk(['apply', '--server-side', '--force-conflicts', '-f', file]);
  await setOperatorUsers(kubeConfig().makeApiClient(CoreV1Api), [
    `system:serviceaccount:${OPERATOR_NAMESPACE}:sandbox-operator`,
    RESTRICTED_USER,
  ]);
}

/** The restricted `sandbox-operator` user's kubeconfig, the identity the operator runs under in tests. */
export function restrictedKubeConfig(): KubeConfig {
  const restricted = inject('restrictedKubeconfig');
  if (restricted === null) throw new Error('integration tests need the local cluster');
  const kc = new KubeConfig();
  kc.loadFromFile(restricted);
  return kc;
}

export type RunningOperator = { stop(): Promise<void>; readonly port: Promise<number> };

export function startOperator(
  namespace: string,
  flags: string[] = [],
  decoratePorts?: (ports: ControllerPorts) => ControllerPorts,
  /** A kubeconfig to reach the API server through (a test proxy) instead of the restricted user's own. */
  through?: KubeConfig,
  /** Where the operator logs (a test that reads its log); stderr at OPERATOR_LOG_LEVEL by default. */
  logTo?: Logger,
): RunningOperator {
  const kc = through ?? restrictedKubeConfig();
  const config = loadConfig(
    [
      '--namespace',
      namespace,
      '--lease-name',
      `test-${namespace}`,
      '--probe-bind',
      '127.0.0.1:0',
      '--metrics-bind',
      '127.0.0.1:0',
      '--resync-ms',
      '20000',
      '--blocked-recheck-ms',
      '2000',
      ...flags,
    ],
    {},
  );
  const controller = new AbortController();
  const log = logTo ?? pino({ level: process.env['OPERATOR_LOG_LEVEL'] ?? 'warn' }, pino.destination(2));
  let listening: (port: number) => void = () => undefined;
  const port = new Promise<number>((resolve) => (listening = resolve));
  const done = runManager({
    kubeConfig: kc,
    config,
    log,
    signal: controller.signal,
    onListening: listening,
    ...(decoratePorts ? { decoratePorts } : {}),
  });
  return {
    port,
    async stop() {
      controller.abort();
      await done;
    },
  };
}

export const customObjects = () => kubeConfig().makeApiClient(CustomObjectsApi);
export const core = () => kubeConfig().makeApiClient(CoreV1Api);

/** The tests' one waiting helper lives in test/harness/eventually.ts; re-exported for these tests. */
export { eventually, pending } from '../../harness/eventually.ts';
