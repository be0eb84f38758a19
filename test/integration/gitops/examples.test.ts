/**
 * GitOps use of examples/: applied twice with server-side apply while the operator runs, the second apply
 * changes nothing and `kubectl diff --server-side` is clean — the operator writes only status and its
 * finalizer, never a field the GitOps tool owns.
 */
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXCLUSIVITY_FINALIZER, LABELS } from '../../../operator/api/names.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import {
  core,
  eventually,
  pending,
  grantOperatorRbac,
  startOperator,
  type RunningOperator,
} from '../controller/operator.ts';

const namespace = testNamespace('gitops');
const MANAGER = 'gitops';
const EXAMPLES = 'examples';
let operator: RunningOperator;

type ManagedFields = {
  manager: string;
  operation: string;
  subresource?: string;
  time?: string;
  fieldsV1?: object;
};
type Live = {
  kind: string;
  metadata: { name: string; generation?: number; finalizers?: string[]; managedFields?: ManagedFields[] };
  spec: object;
  status?: {
    pods?: { total: number };
    references?: { attached: number; detached: number; foreign: number };
  };
};

/**
 * The examples for kwok nodes. real-node-sandbox.yaml needs the real node (its shell image, the sidecar image)
 * and is applied by test/e2e/real-node/npm-start.test.ts; the warm pool and its claim
 * (warm-pool.yaml, sandbox-claim.yaml) by test/e2e/real-node/examples.test.ts, which re-applies them with a
 * clean server-side diff, and by the README's walkthrough of them.
 */
const ELSEWHERE = ['real-node-sandbox.yaml', 'sandbox-claim.yaml', 'warm-pool.yaml'];
const KWOK_EXAMPLES = [
  'cleanup-policy.yaml',
  'idle-suspend.yaml',
  'isolated-sandbox.yaml',
  'persistent-workspace.yaml',
  'shared-sandbox.yaml',
];
const files = KWOK_EXAMPLES.flatMap((file) => ['-f', `${EXAMPLES}/${file}`]);

const apply = () =>
  kubectlOk(['apply', '--server-side', `--field-manager=${MANAGER}`, '-n', namespace, ...files]);

async function live(): Promise<Live[]> {
  const list = await kubectlOk([
    'get',
    'sandboxes.sandbox.agents.dev,sessionreferences.sandbox.agents.dev',
    '-n',
    namespace,
    '-o',
    'json',
    '--show-managed-fields',
  ]);
  return (JSON.parse(list) as { items: Live[] }).items;
}

const byName = (objects: Live[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

const gitopsEntry = (object: Live) => object.metadata.managedFields?.find((f) => f.manager === MANAGER);

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator.stop();
});

describe('the examples under GitOps', () => {
  it('are taken up by the operator: finalizer, status and pods', async () => {
    expect((await readdir(EXAMPLES)).filter((f) => f.endsWith('.yaml')).sort()).toEqual(
      [...KWOK_EXAMPLES, ...ELSEWHERE].sort(),
    );
    await apply();
    // Settled: every sandbox has the finalizer, its pod, and a status that counts both pod and references.
    const objects = await eventually('the operator has taken up every sandbox', async () => {
      const current = await live();
      const sandboxes = current.filter((o) => o.kind === 'Sandbox');
      const settled = sandboxes.every(
        (s) =>
          s.metadata.finalizers?.includes(EXCLUSIVITY_FINALIZER) === true &&
          s.status?.pods?.total === 1 &&
          s.status.references !== undefined,
      );
      const shared = byName(current, 'Sandbox', 'shared-login')?.status?.references?.attached;
      return sandboxes.length === KWOK_EXAMPLES.length && settled && shared === 3
        ? current
        : pending({ sandboxes: sandboxes.length, settled, sharedAttached: shared });
    });
    expect(byName(objects, 'Sandbox', 'shared-login')?.status?.references).toMatchObject({
      attached: 3,
      foreign: 1,
    });
    expect(byName(objects, 'Sandbox', 'isolated-billing')?.status?.references).toMatchObject({
      attached: 1,
      foreign: 0,
    });
    const pods = await core().listNamespacedPod({ namespace, labelSelector: LABELS.sandbox });
    expect(pods.items.map((pod) => pod.metadata?.name).sort()).toEqual([
      'isolated-billing-0',
      'research-notes-0',
      'scratch-ephemeral-0',
      'scratch-idle-0',
      'shared-login-0',
    ]);
    // The persistent workspace's claim, made by the operator, bound by the local control plane's provisioner.
    await eventually('the workspace claim bound', async () => {
      const claim = await core().readNamespacedPersistentVolumeClaim({
        namespace,
        name: 'workspace-research-notes',
      });
      return claim.status?.phase === 'Bound' ? claim : pending({ phase: claim.status?.phase });
    });
  });

  it('change nothing when applied again, and show no diff', async () => {
    const before = await live();
    await apply();
    const after = await live();
    for (const object of before) {
      const again = byName(after, object.kind, object.metadata.name);
      expect(again?.metadata.generation, `${object.kind} ${object.metadata.name}`).toBe(
        object.metadata.generation,
      );
      expect(again?.spec).toEqual(object.spec);
      // A no-op apply leaves the manager's entry untouched (its time included).
      expect(gitopsEntry(again!)).toEqual(gitopsEntry(object));
    }
    const diff = await kubectl([
      'diff',
      '--server-side',
      `--field-manager=${MANAGER}`,
      '-n',
      namespace,
      ...files,
    ]);
    expect(diff.stderr).toBe('');
    expect(diff.stdout).toBe('');
    expect(diff.exitCode).toBe(0);
  });

  it('leave the GitOps tool every field but status and the operator’s finalizer', async () => {
    const foreignWrites = (await live()).flatMap((object) =>
      (object.metadata.managedFields ?? [])
        .filter((entry) => entry.manager !== MANAGER && entry.subresource !== 'status')
        .filter((entry) => JSON.stringify(entry.fieldsV1) !== JSON.stringify(finalizerOnly))
        .map(
          (entry) =>
            `${object.kind} ${object.metadata.name}: ${entry.manager} ${JSON.stringify(entry.fieldsV1)}`,
        ),
    );
    expect(foreignWrites).toEqual([]);
    // Not vacuous: each Sandbox carries both the GitOps tool's entry and the operator's finalizer write.
    for (const sandbox of (await live()).filter((o) => o.kind === 'Sandbox')) {
      const entries = sandbox.metadata.managedFields ?? [];
      expect(entries.map((f) => f.manager)).toContain(MANAGER);
      expect(entries.some((f) => JSON.stringify(f.fieldsV1) === JSON.stringify(finalizerOnly))).toBe(true);
    }
  });
});

/** The managed-fields record of a write that set only the exclusivity finalizer. */
const finalizerOnly = {
  'f:metadata': { 'f:finalizers': { '.': {}, [`v:"${EXCLUSIVITY_FINALIZER}"`]: {} } },
};
