// The operator's own identity on the local control plane: the chart's ServiceAccount with the chart's RBAC
// (rendered by helm, so the rules have one home) and a token for it. `npm start` runs the operator with this
// kubeconfig, so the pod-protection policy trusts it exactly as it trusts the chart's Deployment, while the
// admin kubeconfig printed for the user stays outside the policy's operator users.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OPERATOR_RELEASE, OPERATOR_USER, renderChart } from './chart.ts';
import type { LocalCluster } from './control-plane.ts';
import { LocalClusterError } from './errors.ts';
import { writeKubeconfig } from './kubeconfig.ts';

/** Long enough for a working day or a week-long soak; the local cluster lives no longer than `npm start`. */
const TOKEN_DURATION = '168h';

export async function provisionOperatorIdentity(
  cluster: LocalCluster,
  options: { readonly cacheDir?: string } = {},
): Promise<string> {
  const { namespace, name } = OPERATOR_RELEASE;
  const rbac = await renderChart({
    // The shell reaper's ClusterRole: a namespace's sandboxes bind their ServiceAccount to it.
    templates: ['templates/rbac.yaml', 'templates/shell-reaper-rbac.yaml'],
    ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
  });
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
    user: OPERATOR_USER,
    token: token.stdout.trim(),
    contextName: 'sandbox-operator-local',
  });
  return path;
}
