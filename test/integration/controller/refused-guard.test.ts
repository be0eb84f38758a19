/**
 * A platform policy that refuses `maxUnavailable: 0` budgets (a common rule, e.g. Gatekeeper's library) makes
 * every eviction guard of the namespace impossible. The operator must say so on the Sandbox (Misconfigured,
 * with the fix), create no pod that would run unguarded, and still release an exclusive sandbox: the guard
 * protects pods until their release, and a refused one must not hold the release itself.
 */
import { AdmissionregistrationV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../../operator/api/names.ts';
import { kubeConfig, kubectlOk, testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteReference,
  deleteSandbox,
  getSandbox,
  sandboxGone,
  untilSandbox,
} from './fixtures.ts';
import {
  core,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('refused-guard');
const policy = `${namespace}-no-zero-budgets`;
let operator: RunningOperator;

const admission = () => kubeConfig().makeApiClient(AdmissionregistrationV1Api);

/** The platform's rule, bound to this test's namespace only. */
async function refuseZeroBudgets(): Promise<void> {
  await admission().createValidatingAdmissionPolicy({
    body: {
      metadata: { name: policy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['policy'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['poddisruptionbudgets'],
            },
          ],
        },
        validations: [
          {
            expression: "!has(object.spec.maxUnavailable) || string(object.spec.maxUnavailable) != '0'",
            message: 'budgets must allow at least one disruption',
          },
        ],
      },
    },
  });
  await admission().createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name: policy },
      spec: {
        policyName: policy,
        validationActions: ['Deny'],
        matchResources: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
        },
      },
    },
  });
  // A policy takes effect once the API server has loaded it: probe with a budget of our own, as the admin
  // (the operator's identity is bounded to the guard's exact form: its probe would be refused for that).
  const probeApi = kubeConfig().makeApiClient(PolicyV1Api);
  await eventually('the policy refuses zero budgets', async () => {
    const refused = await probeApi
      .createNamespacedPodDisruptionBudget({
        namespace,
        body: {
          metadata: { name: 'probe' },
          spec: { maxUnavailable: 0, selector: { matchLabels: { probe: 'yes' } } },
        },
      })
      .then(
        async () => {
          await probeApi.deleteNamespacedPodDisruptionBudget({ namespace, name: 'probe' });
          return 'admitted';
        },
        // No `reason` on the validation: refused with 422 Invalid, as a webhook's denial comes with 400.
        (error: unknown) => ((error as { code?: number }).code === 422 ? true : String(error)),
      );
    return refused === true ? true : pending({ probe: refused });
  });
}

async function allowZeroBudgets(): Promise<void> {
  await admission()
    .deleteValidatingAdmissionPolicyBinding({ name: policy })
    .catch(() => undefined);
  await admission()
    .deleteValidatingAdmissionPolicy({ name: policy })
    .catch(() => undefined);
}

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
  // Guarded before the policy came: its budget exists, and is lost only later.
  await createSandbox(namespace, 'shared', { worktree: 'wt-1' });
  await createReference(namespace, 'foreign', {
    sandbox: 'shared',
    session: 'workspace_7',
    worktree: 'wt-2',
  });
  await untilSandbox(namespace, 'shared', 'pod running', (sandbox) => sandbox.status?.phase === 'Running');
  await refuseZeroBudgets();
});
afterAll(async () => {
  await allowZeroBudgets();
  await operator.stop();
});

const podsOf = async (sandbox: string) =>
  (await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` })).items;

const misconfigured = (sandbox: Awaited<ReturnType<typeof getSandbox>>) =>
  sandbox?.status?.conditions?.find((condition) => condition.type === 'Misconfigured');

describe('an eviction guard a policy refuses', () => {
  it('is said on the Sandbox with the fix, and no pod is created to run unguarded', async () => {
    await createSandbox(namespace, 'solo', { worktree: 'wt-3' });
    const said = await untilSandbox(
      namespace,
      'solo',
      'Misconfigured',
      (sandbox) => misconfigured(sandbox)?.status === 'True',
    );
    expect(misconfigured(said)?.reason).toBe('EvictionGuardRefused');
    expect(misconfigured(said)?.message).toContain('solo-sandbox');
    expect(misconfigured(said)?.message).toContain('budgets must allow at least one disruption');
    expect(await podsOf('solo')).toEqual([]);
  });

  it('does not hold the release of an exclusive sandbox', async () => {
    await deleteSandbox(namespace, 'solo');
    await sandboxGone(namespace, 'solo', 30_000);
  });

  it('keeps a shared sandbox blocked, and says why the guard is gone', async () => {
    // As an operator user, whom guard-protection lets through: the guard is lost, and cannot come back.
    await (await policyApi()).deleteNamespacedPodDisruptionBudget({ namespace, name: 'shared-sandbox' });
    await deleteSandbox(namespace, 'shared');
    const blocked = await untilSandbox(
      namespace,
      'shared',
      'blocked and misconfigured',
      (sandbox) => sandbox.status?.phase === 'Blocked' && misconfigured(sandbox)?.status === 'True',
    );
    expect(misconfigured(blocked)?.reason).toBe('EvictionGuardRefused');
    expect((await podsOf('shared')).map((pod) => pod.metadata?.deletionTimestamp)).toEqual([undefined]);
  });

  it('is made once the policy allows it: the pods follow, and the misconfiguration is resolved', async () => {
    await createSandbox(namespace, 'later', { worktree: 'wt-4' });
    await untilSandbox(
      namespace,
      'later',
      'Misconfigured',
      (sandbox) => misconfigured(sandbox)?.status === 'True',
    );
    await allowZeroBudgets();
    // A misconfiguration is rechecked slowly, or at once on a change of the Sandbox: make one.
    await kubectlOk(['annotate', 'sandbox', 'later', '-n', namespace, 'touched=after-the-fix']);
    await untilSandbox(
      namespace,
      'later',
      'resolved',
      (sandbox) => misconfigured(sandbox)?.status === 'False',
    );
    await eventually('guard and pod', async () => {
      const budgets = await (await policyApi()).listNamespacedPodDisruptionBudget({ namespace });
      const guarded = budgets.items.some((budget) => budget.metadata?.name === 'later-sandbox');
      const pods = (await podsOf('later')).length;
      return guarded && pods === 1 ? true : pending({ guarded, pods });
    });
  });

  it('releases the shared sandbox once its foreign reference is forgotten', async () => {
    await deleteReference(namespace, 'foreign');
    await sandboxGone(namespace, 'shared', 60_000);
    expect(await podsOf('shared')).toEqual([]);
  });
});

async function policyApi() {
  const { PolicyV1Api } = await import('@kubernetes/client-node');
  return kubeConfig({ restricted: true }).makeApiClient(PolicyV1Api);
}
