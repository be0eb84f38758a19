// vitest global setup of the soak project: its own local control plane with the API server's audit log on,
// so the log holds only the soak's traffic and no other tier's operator acts on the soak's namespaces.
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startLocalCluster } from '../../operator/local-cluster/index.ts';
import { AUDIT_POLICY } from './audit-policy.ts';
import '../harness/provided-context.ts';
import './provided-context.ts';

/**
 * The operator the soak kills and restarts, compiled as the image runs it: under tsx a restart on a loaded
 * 2-core machine took up to 40 s of transpiling, time the bounds would charge to the operator. Inside
 * node_modules so the build resolves the repo's packages; its own package.json makes it an ES module scope.
 */
async function buildOperator(): Promise<string> {
  const out = join('node_modules', '.cache', 'sandbox-operator', 'soak-build');
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  await promisify(execFile)(process.execPath, [
    join('node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    'tsconfig.build.json',
    '--outDir',
    out,
    '--declaration',
    'false',
    '--sourceMap',
    'false',
  ]);
  await writeFile(join(out, 'package.json'), '{ "type": "module" }\n');
  return join(out, 'operator', 'cli', 'main.js');
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('operatorMain', await buildOperator());
  const cluster = await startLocalCluster({ auditPolicy: AUDIT_POLICY });
  if (cluster.auditLogPath === null) throw new Error('the soak cluster started without its audit log');
  project.provide('kubeconfig', cluster.kubeconfigPath);
  project.provide('restrictedKubeconfig', cluster.restrictedKubeconfigPath);
  project.provide('kubectl', cluster.binaries.kubectl);
  project.provide('clusterKind', 'local');
  project.provide('auditLogPath', cluster.auditLogPath);
  project.provide('clusterTempDir', cluster.tempDir);
  return () => cluster.stop();
}
