/** PodApi and GuardApi over client-node. */
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { LABELS, MANAGED_BY } from '../../api/names.ts';
import { KubeRequestError, request, requestUnlessGone } from '../errors.ts';
import type { JsonPatchOp } from '../finalizer.ts';
import { podSummaryOf, type PodSummary } from '../pod-summary.ts';
import type { GuardApi, PodApi } from '../ports.ts';
import { FIELD_MANAGER, JSON_PATCH, type KubeClients } from './clients.ts';

export function kubePodApi({ core }: KubeClients): PodApi {
  return {
    async create(pod: V1Pod) {
      const namespace = pod.metadata?.namespace ?? '';
      const target = `pod ${namespace}/${pod.metadata?.name ?? ''}`;
      try {
        await request('Create', target, () =>
          core.createNamespacedPod({
            namespace: namespace,
            body: pod,
            fieldManager: FIELD_MANAGER,
          }),
        );
        return 'Created';
      } catch (error) {
        if (error instanceof KubeRequestError && error.status === 409) return 'Exists';
        throw error;
      }
    },
    async listLive(namespace, sandbox) {
      const list = await request('List', `pods of ${namespace}/${sandbox}`, () =>
        core.listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` }),
      );
      return list.items.flatMap((pod): PodSummary[] => {
        const summary = podSummaryOf(pod);
        return summary ? [summary] : [];
      });
    },
    async delete(namespace, name, uid) {
      await requestUnlessGone('Delete', `pod ${namespace}/${name}`, () =>
        core.deleteNamespacedPod({ namespace, name, body: { preconditions: { uid } } }),
      );
    },
    async patchMetadata(namespace, name, ops: readonly JsonPatchOp[]) {
      await request('PatchFinalizers', `pod ${namespace}/${name}`, () =>
        core.patchNamespacedPod({ namespace, name, body: ops, fieldManager: FIELD_MANAGER }, JSON_PATCH),
      );
    },
  };
}

export const disruptionBudgetName = (sandbox: string) => `${sandbox}-sandbox`;

export function kubeGuardApi({ policy }: KubeClients): GuardApi {
  return {
    async ensureDisruptionBudget(sandbox) {
      const { name, namespace, uid } = sandbox.metadata;
      const budget: V1PodDisruptionBudget = {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: {
          name: disruptionBudgetName(name),
          namespace,
          labels: { [LABELS.sandbox]: name, [LABELS.managedBy]: MANAGED_BY },
          ownerReferences: [
            {
              apiVersion: 'sandbox.agents.dev/v1alpha1',
              kind: 'Sandbox',
              name,
              uid: uid ?? '',
              controller: true,
            },
          ],
        },
        spec: { maxUnavailable: 0, selector: { matchLabels: { [LABELS.sandbox]: name } } },
      };
      try {
        await request('Create', `poddisruptionbudget ${namespace}/${disruptionBudgetName(name)}`, () =>
          policy.createNamespacedPodDisruptionBudget({
            namespace,
            body: budget,
            fieldManager: FIELD_MANAGER,
          }),
        );
      } catch (error) {
        if (error instanceof KubeRequestError && error.status === 409) return;
        throw error;
      }
    },
  };
}
