// vitest global setup of the soak project: its own local control plane with the API server's audit log on,
// so the log holds only the soak's traffic and no other tier's operator acts on the soak's namespaces.
import type { TestProject } from 'vitest/node';
import { buildOperatorBundle } from '../harness/operator-bundle.ts';
import { ADMIN_USER, RESTRICTED_USER, startLocalCluster } from '@sandbox-operator/local-cluster';
import { startTestScheduler } from '../harness/scheduler.ts';
import { auditPolicy } from './audit-policy.ts';
import { SOAK_SCHEDULER } from './nodes.ts';
import '../harness/provided-context.ts';
import './provided-context.ts';

// The operator the soak kills and restarts runs bundled, as the image runs it: under tsx a restart on a
// loaded 2-core machine took up to 40 s of transpiling, time the bounds would charge to the operator.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('operatorMain', await buildOperatorBundle('soak-build'));
  const cluster = await startLocalCluster({
    auditPolicy: auditPolicy({ admin: ADMIN_USER, operator: RESTRICTED_USER }),
  });
  if (cluster.auditLogPath === null) throw new Error('the soak cluster started without its audit log');
  // Places every sandbox pod on its sequence's own nodes, and off a drained one (nodes.ts).
  const scheduler = await startTestScheduler(cluster.kubeconfigPath, SOAK_SCHEDULER);
  project.provide('kubeconfig', cluster.kubeconfigPath);
  project.provide('restrictedKubeconfig', cluster.restrictedKubeconfigPath);
  project.provide('kubectl', cluster.binaries.kubectl);
  project.provide('clusterKind', 'local');
  project.provide('auditLogPath', cluster.auditLogPath);
  project.provide('clusterTempDir', cluster.tempDir);
  return async () => {
    await scheduler.stop();
    await cluster.stop();
  };
}
