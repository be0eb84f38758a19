/**
 * The operator as its own process (`operator/cli/main.ts`, what `npm start` runs) against the cluster under
 * test, as the operator's own identity: on the local control plane the restricted `sandbox-operator` user
 * with the chart's RBAC; on an external cluster (kind) a token of the chart's ServiceAccount.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { kubeConfig, kubectlOk } from '../harness/kube.ts';
import { grantOperatorRbac, OPERATOR_NAMESPACE } from '../integration/controller/operator.ts';

let identity: Promise<string> | undefined;

/** A kubeconfig for the operator's identity, prepared once per file. */
export function operatorKubeconfig(): Promise<string> {
  identity ??= (async () => {
    const restricted = inject('restrictedKubeconfig');
    if (restricted !== null) {
      await grantOperatorRbac();
      return restricted;
    }
    const token = (
      await kubectlOk(['create', 'token', 'sandbox-operator', '-n', OPERATOR_NAMESPACE, '--duration', '2h'])
    ).trim();
    const kc = kubeConfig();
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('KUBECONFIG has no current cluster');
    const path = join(tmpdir(), `operator-sa-${process.pid}.kubeconfig`);
    const ca = cluster.caData
      ? `    certificate-authority-data: ${cluster.caData}\n`
      : `    insecure-skip-tls-verify: ${String(cluster.skipTLSVerify)}\n`;
    await writeFile(
      path,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${cluster.server}\n${ca}users:\n- name: operator\n  user:\n    token: ${token}\ncontexts:\n- name: c\n  context: {cluster: c, user: operator}\ncurrent-context: c\n`,
    );
    return path;
  })();
  return identity;
}

export type OperatorProcess = {
  readonly child: ChildProcess;
  /** Resolves with the signal or exit code when the process ends. */
  readonly exited: Promise<NodeJS.Signals | number | null>;
  output(): string;
  stop(): Promise<void>;
};

export async function startOperatorProcess(
  namespace: string,
  options: { failpoints?: string[]; flags?: string[] } = {},
): Promise<OperatorProcess> {
  const kubeconfig = await operatorKubeconfig();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'operator/cli/main.ts',
      '--namespace',
      namespace,
      '--leader-elect',
      'false',
      '--probe-bind',
      '127.0.0.1:0',
      '--metrics-bind',
      '127.0.0.1:0',
      '--blocked-recheck-ms',
      '2000',
      ...(options.flags ?? []),
    ],
    {
      env: {
        ...process.env,
        KUBECONFIG: kubeconfig,
        SANDBOX_OPERATOR_FAILPOINTS: (options.failpoints ?? []).join(','),
        SANDBOX_OPERATOR_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(
    ([code, signal]) => (signal as NodeJS.Signals | null) ?? (code as number | null),
  );
  return {
    child,
    exited,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
