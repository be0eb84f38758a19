/**
 * The platform team's policy that refuses the eviction guard (issue 25, #5): a ValidatingAdmissionPolicy that
 * forbids `maxUnavailable: 0` budgets, a common platform rule (they block node drains), bound to the namespaces
 * that carry REFUSE_LABEL. A sequence turns it on and off for its own namespace by that label (at its start,
 * or by the `platform` operations), so sequences side by side never refuse each other's guards. The operator
 * learns of the refusal only from its own writes: the judgement reads their 403s in the audit log.
 */
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { LABELS } from '../../operator/api/names.ts';
import { outcomeOf, type SequenceContext } from './agent-host.ts';
import { actorClients } from './kube.ts';

export const REFUSE_LABEL = 'soak.sandbox.agents.dev/refuse-zero-budgets';
export const REFUSAL_POLICY = 'soak-platform-refuses-zero-budgets';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The policy and its binding; then proves it refuses (a check that cannot fail would prove nothing). */
export async function installRefusalPolicy(admin: KubeConfig, tag: string): Promise<void> {
  const admission = admin.makeApiClient(AdmissionregistrationV1Api);
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name: REFUSAL_POLICY },
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
            expression:
              "!has(object.spec.maxUnavailable) || !(string(object.spec.maxUnavailable) in ['0', '0%'])",
            message: 'platform policy: a PodDisruptionBudget with maxUnavailable 0 blocks every node drain',
            reason: 'Forbidden',
          },
        ],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name: REFUSAL_POLICY },
      spec: {
        policyName: REFUSAL_POLICY,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { [REFUSE_LABEL]: 'true' } } },
      },
    },
  });
  await proveRefusal(admin, `soak-platform-${tag}`);
}

async function proveRefusal(admin: KubeConfig, namespace: string): Promise<void> {
  const core = admin.makeApiClient(CoreV1Api);
  const policy = admin.makeApiClient(PolicyV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace, labels: { [REFUSE_LABEL]: 'true' } } } });
  const budget = (maxUnavailable: number) => ({
    namespace,
    dryRun: 'All',
    body: {
      metadata: { name: `guard-${maxUnavailable}` },
      spec: { maxUnavailable, selector: { matchLabels: { [LABELS.sandbox]: 'x' } } },
    },
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const refused = await policy.createNamespacedPodDisruptionBudget(budget(0)).then(
      () => undefined,
      (error: unknown) => outcomeOf(error),
    );
    if (refused === 'HTTP 403') break;
    if (Date.now() > deadline)
      throw new Error(
        `the platform policy ${REFUSAL_POLICY} does not refuse a zero budget: ${refused ?? 'created'}`,
      );
    await sleep(250);
  }
  // Only the guard's kind of budget: one that allows a disruption goes through.
  await policy.createNamespacedPodDisruptionBudget(budget(1));
  await core.deleteNamespace({ name: namespace });
}

/** Turns the refusal on or off for the sequence's namespace (a label its binding selects). */
export async function refuseGuards(ctx: SequenceContext, on: boolean): Promise<void> {
  const op = ctx.model.begin(
    'platform',
    on
      ? 'platform refuses maxUnavailable: 0 budgets in the namespace'
      : 'platform lifts its refusal of maxUnavailable: 0 budgets',
  );
  const { core } = actorClients(ctx.connections, op.userAgent);
  try {
    await core.patchNamespace(
      { name: ctx.namespace, body: { metadata: { labels: { [REFUSE_LABEL]: on ? 'true' : null } } } },
      MERGE,
    );
    ctx.model.end(op, 'ok');
  } catch (error) {
    ctx.model.end(op, outcomeOf(error));
  }
}
