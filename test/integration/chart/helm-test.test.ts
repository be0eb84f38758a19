/**
 * The `helm test` hooks on the local control plane: they pass a server-side dry run, and the sandbox round
 * trip the test Pod runs (its command, run here against the cluster on the bundle the image carries, built
 * into a temporary directory) succeeds against a running operator and fails, saying what it waited for,
 * without one.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import { kubectl, testNamespace } from '../../harness/kube.ts';
import { grantOperatorRbac, startOperator, type RunningOperator } from '../controller/operator.ts';
import { template } from './helm.ts';
import { bundleOperator } from '../../../scripts/bundle-operator.mjs';

const run = promisify(execFile);
const namespace = testNamespace('helm-test');
const unwatched = testNamespace('helm-test-idle');
let operator: RunningOperator;
let bundles: string;

beforeAll(async () => {
  bundles = await mkdtemp(join(tmpdir(), 'helm-test-bundle-'));
  await bundleOperator(join(bundles, 'dist', 'bundle'));
  await grantOperatorRbac();
  operator = startOperator(namespace);
}, 120_000);
afterAll(async () => {
  await operator.stop();
  await rm(bundles, { recursive: true, force: true });
});

async function hooks(releaseNamespace: string) {
  const rendered = await template(
    { tests: { timeoutSeconds: 30 } },
    { namespace: releaseNamespace, tests: true },
  );
  return rendered;
}

/** The round-trip Pod's command, run on the image's file (the bundle, from a directory like the image's /app). */
async function roundTrip(releaseNamespace: string, timeoutSeconds: number) {
  const rendered = await hooks(releaseNamespace);
  const pod = rendered.objects.find(
    (o) => o.kind === 'Pod' && o.metadata.name.endsWith('-test-sandbox'),
  ) as unknown as V1Pod;
  const [node, script, ...args] = pod.spec!.containers[0]!.command!;
  expect([node, script]).toEqual(['node', 'dist/bundle/chart-test.mjs']);
  const flags = args.map((arg) =>
    arg.startsWith('--timeout-seconds=') ? `--timeout-seconds=${timeoutSeconds}` : arg,
  );
  try {
    const { stdout } = await run(process.execPath, [script!, ...flags, `--node-name=${kwokNodeName(0)}`], {
      cwd: bundles,
      env: { ...process.env, KUBECONFIG: inject('kubeconfig') },
    });
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('helm test', () => {
  it('has hooks the API server accepts', async () => {
    const rendered = await hooks(namespace);
    const hookObjects = rendered.objects.filter((o) => o.metadata.name.includes('-test-'));
    expect(hookObjects.map((o) => o.kind).sort()).toEqual([
      'Pod',
      'Pod',
      'Role',
      'RoleBinding',
      'ServiceAccount',
    ]);
    const result = await kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: hookObjects }),
    });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it('creates a Sandbox, sees the operator make it Ready, deletes it and sees it released', async () => {
    const result = await roundTrip(namespace, 60);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /created Sandbox .*\nthe operator made it Ready\ndeleted it\nthe operator released it and it is gone/,
    );
    expect(result.code).toBe(0);
  });

  it('fails with what it waited for when no operator watches the namespace', async () => {
    const result = await roundTrip(unwatched, 5);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /helm test failed: Sandbox helm-test-idle-\S+\/helm-test-\w+: Ready=True did not happen within 5 s/,
    );
  });
});
