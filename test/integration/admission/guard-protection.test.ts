/**
 * The guards are guarded, against the real API server with the operator running: a user cannot delete or
 * loosen a sandbox's eviction guard (a drain would evict through the gap before the operator re-creates it),
 * and a `kubectl replace` cannot strip the finalizer from a Sandbox, live or being deleted (it would vanish with
 * no decision). Both were found by the soak (docs/soak.md).
 */
import { PolicyV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER, LABELS } from '../../../operator/api/names.ts';
import { kubeConfig, kubectl, testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteSandbox,
  getSandbox,
  sandboxManifest,
  untilSandbox,
} from '../controller/fixtures.ts';
import {
  eventually,
  pending,
  grantOperatorRbac,
  startOperator,
  type RunningOperator,
} from '../controller/operator.ts';

const namespace = testNamespace('guard-protection');
const unwatched = testNamespace('guard-unwatched');
let operator: RunningOperator;
const budgets = () => kubeConfig().makeApiClient(PolicyV1Api);

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
  await createSandbox(namespace, 'shared', { worktree: 'wt-1' });
  await createReference(namespace, 'board', { sandbox: 'shared', session: 'workspace_9', worktree: 'wt-2' });
  await eventually('the eviction guard', async () => {
    const list = await budgets().listNamespacedPodDisruptionBudget({ namespace });
    const names = list.items.map((b) => b.metadata?.name);
    return names.includes('shared-sandbox') ? true : pending({ budgets: names });
  });
});
afterAll(async () => {
  await operator.stop();
});

describe('the eviction guard', () => {
  it('refuses a user deleting it, naming its Sandbox', async () => {
    const result = await kubectl(['delete', 'pdb', 'shared-sandbox', '-n', namespace]);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('is the eviction guard of Sandbox shared');
  });

  it('refuses a user loosening it', async () => {
    const result = await kubectl([
      'patch',
      'pdb',
      'shared-sandbox',
      '-n',
      namespace,
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/spec/maxUnavailable","value":1}]',
    ]);
    expect(result.exitCode).not.toBe(0);
    expect(
      (await budgets().readNamespacedPodDisruptionBudget({ name: 'shared-sandbox', namespace })).spec
        ?.maxUnavailable,
    ).toBe(0);
  });
});

describe('the eviction guard, through its status subresource', () => {
  it('refuses a user relabelling it (a relabelled budget would no longer be guarded against deletion)', async () => {
    const label = LABELS.sandbox.replace('/', '~1');
    const result = await kubectl([
      'patch',
      'pdb',
      'shared-sandbox',
      '-n',
      namespace,
      '--subresource=status',
      '--type=json',
      '-p',
      `[{"op":"remove","path":"/metadata/labels/${label}"}]`,
    ]);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('is the eviction guard of Sandbox shared');
    const budget = await budgets().readNamespacedPodDisruptionBudget({ name: 'shared-sandbox', namespace });
    expect(budget.metadata?.labels?.[LABELS.sandbox]).toBe('shared');
  });

  it('lets its status writers write its status: the disruption controller observes it', async () => {
    // kube-controller-manager's disruption controller writes every budget's status (DisruptionAllowed, the
    // healthy counts). Refused, it retries for ever and the guard is never observed (found by the soak).
    const observed = await eventually('the guard’s status written by the disruption controller', async () => {
      const budget = await budgets().readNamespacedPodDisruptionBudget({ name: 'shared-sandbox', namespace });
      const condition = budget.status?.conditions?.find((c) => c.type === 'DisruptionAllowed');
      return condition ?? pending({ status: budget.status });
    });
    expect(observed.status).toBe('False'); // maxUnavailable 0: no eviction is allowed
    // And any status writer that changes only the status (here the test's administrator, not an operator user).
    const result = await kubectl([
      'patch',
      'pdb',
      'shared-sandbox',
      '-n',
      namespace,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"expectedPods":1}}',
    ]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });
});

describe('a live Sandbox', () => {
  it('keeps its finalizer through a kubectl replace; a replace that carries it goes through', async () => {
    await createSandbox(namespace, 'replaced', { worktree: 'wt-1' });
    await untilSandbox(
      namespace,
      'replaced',
      'the finalizer',
      (sandbox) => sandbox.metadata.finalizers?.includes(EXCLUSIVITY_FINALIZER) === true,
    );
    const manifest = sandboxManifest(namespace, 'replaced', { worktree: 'wt-1' });
    // A replace at the live resourceVersion, as `kubectl replace -f` sends it; again if the operator's own
    // status write moved the version in between (409 says nothing about admission).
    const replace = (finalizers?: string[]) =>
      eventually('a replace that is not a version conflict', async () => {
        const resourceVersion = (await getSandbox(namespace, 'replaced'))?.metadata.resourceVersion ?? '';
        const metadata = { ...manifest.metadata, resourceVersion, ...(finalizers ? { finalizers } : {}) };
        const input = JSON.stringify({ ...manifest, metadata });
        const result = await kubectl(['replace', '-f', '-', '-n', namespace], { input });
        return result.stderr.includes('(Conflict)') ? pending({ conflict: result.stderr }) : result;
      });
    const result = await replace();
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain(`its finalizer ${EXCLUSIVITY_FINALIZER} belongs to the operator`);
    expect(result.stderr).toContain('a replace must keep metadata.finalizers');
    expect((await getSandbox(namespace, 'replaced'))?.metadata.finalizers).toContain(EXCLUSIVITY_FINALIZER);
    // A replace that keeps the finalizer (what kubectl apply amounts to) goes through.
    expect((await replace([EXCLUSIVITY_FINALIZER])).exitCode).toBe(0);
  });
});

describe('an adopted Sandbox the operator has not recorded yet', () => {
  it('keeps its adopted-from annotation until the operator records the adoption (issue 25, #4)', async () => {
    // In a namespace no operator watches: the operator down, behind, or unable to parse it. Without the
    // annotation its first status would carry the marker, and no legacy walk would ever run. (Once the status
    // records the adoption the operator remembers it: lifecycle.test.ts, "stays adopted".)
    await createSandbox(unwatched, 'adopted', {
      worktree: 'wt-1',
      annotations: { [ANNOTATIONS.adoptedFrom]: 'cloud-agent v1' },
    });
    const attempts = [
      ['annotate', 'sandbox', 'adopted', '-n', unwatched, `${ANNOTATIONS.adoptedFrom}-`],
      ['annotate', 'sandbox', 'adopted', '-n', unwatched, '--overwrite', `${ANNOTATIONS.adoptedFrom}=other`],
    ];
    for (const attempt of attempts) {
      const result = await kubectl(attempt);
      expect(result.exitCode, attempt.join(' ')).not.toBe(0);
      expect(result.stderr).toContain('status.reconciliation');
    }
    expect((await getSandbox(unwatched, 'adopted'))?.metadata.annotations?.[ANNOTATIONS.adoptedFrom]).toBe(
      'cloud-agent v1',
    );
  });
});

describe('a Sandbox being deleted', () => {
  it('keeps its finalizer through a kubectl replace', async () => {
    await deleteSandbox(namespace, 'shared');
    await untilSandbox(namespace, 'shared', 'blocked', (sandbox) => sandbox.status?.phase === 'Blocked');
    const manifest = sandboxManifest(namespace, 'shared', { worktree: 'wt-1' });
    const resourceVersion = (await getSandbox(namespace, 'shared'))?.metadata.resourceVersion ?? '';
    const input = JSON.stringify({ ...manifest, metadata: { ...manifest.metadata, resourceVersion } });
    const result = await kubectl(['replace', '-f', '-', '-n', namespace], { input });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('is being deleted');
    expect((await getSandbox(namespace, 'shared'))?.metadata.finalizers).toContain(EXCLUSIVITY_FINALIZER);
  });
});
