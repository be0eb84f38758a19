/**
 * An identity of its own for the peer's controller, where the cluster's admin is our operator's user
 * (allowAdmin, as the real-node benches run ours): our operator-bounds policy holds the operator's users to
 * our pods only, so the peer running as admin has every pod create refused. The peer gets what it has when
 * the claims bench runs it as admin, every right (cluster-admin), as the ServiceAccount its manifests name
 * (agent-sandbox-system/agent-sandbox-controller), which our policies do not count as the operator.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalCluster } from '@sandbox-operator/local-cluster';
import { writeKubeconfig } from '@sandbox-operator/local-cluster/kubeconfig';

const NAMESPACE = 'agent-sandbox-system';
const NAME = 'agent-sandbox-controller';

const objects = `apiVersion: v1
kind: Namespace
metadata: { name: ${NAMESPACE} }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: ${NAME}, namespace: ${NAMESPACE} }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: bench-${NAME} }
subjects: [{ kind: ServiceAccount, name: ${NAME}, namespace: ${NAMESPACE} }]
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin }
`;

/** The peer's kubeconfig (in the cluster's temp dir), its ServiceAccount made and bound first. */
export async function peerIdentity(cluster: LocalCluster): Promise<string> {
  const applied = await cluster.kubectl(['apply', '-f', '-'], { input: objects });
  if (applied.exitCode !== 0) throw new Error(`the peer's ServiceAccount: ${applied.stderr}`);
  const token = await cluster.kubectl(['create', 'token', NAME, '-n', NAMESPACE, '--duration', '24h']);
  if (token.exitCode !== 0) throw new Error(`a token for the peer's ServiceAccount: ${token.stderr}`);
  const path = join(cluster.tempDir, 'agent-sandbox.kubeconfig');
  await writeKubeconfig(path, {
    server: cluster.server,
    caPem: await readFile(cluster.caPath, 'utf8'),
    user: `system:serviceaccount:${NAMESPACE}:${NAME}`,
    token: token.stdout.trim(),
    contextName: 'agent-sandbox',
  });
  return path;
}
