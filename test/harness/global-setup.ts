// vitest global setup of the integration and e2e projects: one real control plane per run, shared by
// both projects (they set up one after the other in the same process), stopped when the last tears down.
// With SANDBOX_OPERATOR_E2E_EXTERNAL=1 and KUBECONFIG set, the cluster in KUBECONFIG is used instead.
import type { TestProject } from 'vitest/node';
import { ensureBinaries, startLocalCluster, type LocalCluster } from '@sandbox-operator/local-cluster';
import { ensureHealthCheckers } from './health-checks.ts';
import './provided-context.ts';

interface SharedCluster {
  users: number;
  cluster: Promise<LocalCluster>;
}

/**
 * What the admission policies' auditAnnotations write is recorded for pods, Sandboxes and references only, at Metadata
 * level (the annotations, not the bodies), so admission tests can read who used an override.
 */
const ADMISSION_AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create, update, patch, delete]
    resources:
      - group: ''
        resources: [pods, pods/status, pods/ephemeralcontainers]
      - group: sandbox.agents.dev
        resources: [sandboxes, sessionreferences]
  - level: None
`;

// On globalThis because each vitest project loads this file into its own module graph.
const KEY = Symbol.for('sandbox-operator.test-harness.cluster');

function external(): string | null {
  const kubeconfig = process.env['KUBECONFIG'];
  return process.env['SANDBOX_OPERATOR_E2E_EXTERNAL'] === '1' && kubeconfig !== undefined && kubeconfig !== ''
    ? kubeconfig
    : null;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // kstatus and the Argo CD health checks (test/harness/health), built here on a fresh machine so that no
  // test's timeout includes their build.
  const checkers = ensureHealthCheckers();
  const kubeconfig = external();
  if (kubeconfig !== null) {
    await checkers;
    const { kubectl } = await ensureBinaries({ tools: ['kubectl'] });
    project.provide('kubeconfig', kubeconfig);
    project.provide('restrictedKubeconfig', null);
    project.provide('kubectl', kubectl);
    project.provide('clusterKind', 'external');
    project.provide('realNode', null);
    project.provide('realNodeSkipReason', 'an external cluster (SANDBOX_OPERATOR_E2E_EXTERNAL=1)');
    project.provide('admissionAuditLog', null);
    return () => Promise.resolve();
  }

  let shared = Reflect.get(globalThis, KEY) as SharedCluster | undefined;
  if (shared === undefined) {
    // A real node beside the kwok nodes where the machine can run one, tainted so that only tests which
    // tolerate it (test/e2e/real-node) place pods there; otherwise one line says why, and kwok runs alone.
    shared = {
      users: 0,
      cluster: startLocalCluster({ realNode: { taint: true }, auditPolicy: ADMISSION_AUDIT_POLICY }),
    };
    Reflect.set(globalThis, KEY, shared);
  }
  shared.users++;
  const [cluster] = await Promise.all([shared.cluster, checkers]);
  project.provide('kubeconfig', cluster.kubeconfigPath);
  project.provide('restrictedKubeconfig', cluster.restrictedKubeconfigPath);
  project.provide('kubectl', cluster.binaries.kubectl);
  project.provide('clusterKind', 'local');
  const node = cluster.realNode;
  project.provide(
    'realNode',
    node === null
      ? null
      : {
          name: node.name,
          shellImage: node.images.shell,
          cgroupName: node.resources.cgroupName,
          containerdSocket: node.containerdSocket,
        },
  );
  project.provide('realNodeSkipReason', cluster.realNodeSkipReason);
  project.provide('admissionAuditLog', cluster.auditLogPath);
  if (node === null && shared.users === 1)
    process.stderr.write(
      `[harness] no real node: ${cluster.realNodeSkipReason ?? ''}; tests that need it skip\n`,
    );
  return async () => {
    shared.users--;
    if (shared.users > 0) return;
    Reflect.deleteProperty(globalThis, KEY);
    await cluster.stop();
  };
}
