// The operator's own identity on the local control plane: the chart's ServiceAccount with the chart's RBAC
// (rendered by helm, so the rules have one home) and a token for it. `npm start` runs the operator with this
// kubeconfig, so the pod-protection policy trusts it exactly as it trusts the chart's Deployment, while the
// admin kubeconfig printed for the user stays outside the policy's operator users.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureBinaries } from './build.ts';
import type { LocalCluster } from './control-plane.ts';
import { LocalClusterError } from './errors.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { TOOLS } from './versions.ts';

const run = promisify(execFile);
const CHART_DIR = fileURLToPath(new URL('../../charts/sandbox-operator/', import.meta.url));
/** The chart's release as the generated admission parameters name it: user system:serviceaccount:NS:NAME. */
export const OPERATOR_RELEASE = { namespace: 'sandbox-system', name: 'sandbox-operator' } as const;
/** Long enough for a working day or a week-long soak; the local cluster lives no longer than `npm start`. */
const TOKEN_DURATION = '168h';

export async function provisionOperatorIdentity(
  cluster: LocalCluster,
  options: { readonly cacheDir?: string } = {},
): Promise<string> {
  const { helm } = await ensureBinaries({
    tools: ['helm'],
    ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
  });
  const { namespace, name } = OPERATOR_RELEASE;
  let rbac: string;
  try {
    ({ stdout: rbac } = await run(helm, [
      'template',
      name,
      CHART_DIR,
      '--namespace',
      namespace,
      '--kube-version',
      TOOLS['kube-apiserver'].version,
      '--show-only',
      'templates/rbac.yaml',
      // The shell reaper's ClusterRole: a namespace's sandboxes bind their ServiceAccount to it.
      '--show-only',
      'templates/shell-reaper-rbac.yaml',
    ]));
  } catch (error) {
    throw new LocalClusterError(
      'operator-identity-failed',
      'helm template of the chart’s RBAC failed',
      { subject: 'helm' },
      { cause: error },
    );
  }
  const applied = await cluster.kubectl(['apply', '--server-side', '-f', '-'], { input: rbac });
  if (applied.exitCode !== 0)
    throw new LocalClusterError('operator-identity-failed', "applying the operator's RBAC failed", {
      outputTail: applied.stderr,
    });
  const token = await cluster.kubectl([
    'create',
    'token',
    name,
    '-n',
    namespace,
    '--duration',
    TOKEN_DURATION,
  ]);
  if (token.exitCode !== 0)
    throw new LocalClusterError('operator-identity-failed', `a token for ${namespace}/${name} failed`, {
      outputTail: token.stderr,
    });
  const path = join(cluster.tempDir, 'operator.kubeconfig');
  await writeKubeconfig(path, {
    server: cluster.server,
    caPem: await readFile(cluster.caPath, 'utf8'),
    user: `system:serviceaccount:${namespace}:${name}`,
    token: token.stdout.trim(),
    contextName: 'sandbox-operator-local',
  });
  return path;
}
