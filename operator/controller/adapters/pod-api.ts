/** PodApi and GuardApi over the API server, as plain JSON (no generated-model walk of pods or budgets). */
import { PatchStrategy, type V1Pod, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import { LABELS, MANAGED_BY } from '../../api/names.ts';
import type { SandboxState } from '../../api/objects.ts';
import { budgetSummaryOf, disruptionBudgetName } from '../cache/budget-summary.ts';
import { KubeRequestError, request, requestUnlessGone } from '../../kube/errors.ts';
import type { JsonPatchOp } from '../finalizer.ts';
import { podSummaryOf, type PodSummary } from '../cache/pod-summary.ts';
import type { GuardApi, NamespaceApi, PodApi, PodNameHolder } from '../ports.ts';
import { FIELD_MANAGER, type KubeClients } from '../../kube/clients.ts';
import { segment } from '../../kube/plain-json.ts';

export function kubePodApi({ json }: KubeClients): PodApi {
  return {
    async create(pod: V1Pod) {
      const namespace = pod.metadata?.namespace ?? '';
      const target = `pod ${namespace}/${pod.metadata?.name ?? ''}`;
      try {
        await request('Create', target, () =>
          json({
            method: 'POST',
            path: podsPath(namespace),
            query: { fieldManager: FIELD_MANAGER },
            body: pod,
          }),
        );
        return 'Created';
      } catch (error) {
        if (!(error instanceof KubeRequestError && error.status === 409)) throw error;
      }
      const path = `${podsPath(namespace)}/${segment(pod.metadata?.name ?? '')}`;
      const holder = await requestUnlessGone('Get', target, () => json({ method: 'GET', path }));
      return holder === undefined ? 'Created' : { taken: podNameHolderOf(holder) };
    },
    async listLive(namespace, sandbox) {
      // Plain JSON: the summary reads a few fields, so the generated V1PodList walk would be spent for nothing.
      const list = (await request('List', `pods of ${namespace}/${sandbox}`, () =>
        json({
          method: 'GET',
          path: podsPath(namespace),
          query: { labelSelector: `${LABELS.sandbox}=${sandbox}` },
        }),
      )) as { items?: unknown[] } | undefined;
      return (list?.items ?? []).flatMap((pod): PodSummary[] => {
        const summary = podSummaryOf(pod);
        return summary ? [summary] : [];
      });
    },
    async delete(namespace, name, uid, resourceVersion) {
      await requestUnlessGone('Delete', `pod ${namespace}/${name}`, () =>
        json({
          method: 'DELETE',
          path: `${podsPath(namespace)}/${segment(name)}`,
          body: { preconditions: resourceVersion === undefined ? { uid } : { uid, resourceVersion } },
        }),
      );
    },
    async patchMetadata(namespace, name, ops: readonly JsonPatchOp[]) {
      // A pod already gone has nothing left to release.
      await requestUnlessGone('PatchFinalizers', `pod ${namespace}/${name}`, () =>
        json({
          method: 'PATCH',
          path: `${podsPath(namespace)}/${segment(name)}`,
          query: { fieldManager: FIELD_MANAGER },
          body: ops,
          contentType: PatchStrategy.JsonPatch,
        }),
      );
    },
  };
}

type RawHolder = {
  metadata?: {
    uid?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: unknown;
    ownerReferences?: { kind?: string; name?: string; uid?: string; controller?: boolean }[];
  };
};

function podNameHolderOf(raw: unknown): PodNameHolder {
  const meta = (raw as RawHolder | null)?.metadata;
  const controller = meta?.ownerReferences?.find((owner) => owner.controller === true);
  return {
    uid: meta?.uid ?? '',
    sandboxLabel: meta?.labels?.[LABELS.sandbox],
    controller: controller
      ? { kind: controller.kind ?? '', name: controller.name ?? '', uid: controller.uid ?? '' }
      : undefined,
    deleting: meta?.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
  };
}

const podsPath = (namespace: string) => `/api/v1/namespaces/${segment(namespace)}/pods`;

/**
 * The budget as it must be: maxUnavailable 0 over the sandbox's pods, and no owner reference, so no cascade
 * of the Sandbox removes it before the pods are released (the release deletes it).
 */
function desiredBudget(sandbox: SandboxState): V1PodDisruptionBudget {
  const { name, namespace } = sandbox.metadata;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: disruptionBudgetName(name),
      namespace,
      labels: { [LABELS.sandbox]: name, [LABELS.managedBy]: MANAGED_BY },
    },
    spec: { maxUnavailable: 0, selector: { matchLabels: { [LABELS.sandbox]: name } } },
  };
}

export function kubeGuardApi({ json }: KubeClients): GuardApi {
  return {
    async ensureDisruptionBudget(sandbox) {
      const desired = desiredBudget(sandbox);
      const { namespace } = sandbox.metadata;
      const name = desired.metadata?.name ?? '';
      const target = `poddisruptionbudget ${namespace}/${name}`;
      const query = { fieldManager: FIELD_MANAGER };
      try {
        await request('Create', target, () =>
          json({ method: 'POST', path: budgetsPath(namespace), query, body: desired }),
        );
        return 'Created';
      } catch (error) {
        if (!(error instanceof KubeRequestError && error.status === 409)) throw error;
      }
      // It exists but the cache did not see it guarding: someone changed it (selector, maxUnavailable, labels).
      // Put the desired form back, preconditioned on the version read; a conflict retries from fresh state.
      const path = `${budgetsPath(namespace)}/${segment(name)}`;
      const current = (await request('Get', target, () => json({ method: 'GET', path }))) as
        { metadata?: { resourceVersion?: string } } | undefined;
      const summary = budgetSummaryOf(current);
      if (summary?.guards === true && !summary.deleting) return 'Unchanged';
      const resourceVersion = current?.metadata?.resourceVersion ?? '';
      await request('Replace', target, () =>
        json({
          method: 'PUT',
          path,
          query,
          body: { ...desired, metadata: { ...desired.metadata, resourceVersion } },
        }),
      );
      return 'Repaired';
    },
    async removeDisruptionBudget(namespace, name, uid) {
      await requestUnlessGone('Delete', `poddisruptionbudget ${namespace}/${name}`, () =>
        json({
          method: 'DELETE',
          path: `${budgetsPath(namespace)}/${segment(name)}`,
          body: { preconditions: { uid } },
        }),
      );
    },
  };
}

const budgetsPath = (namespace: string) =>
  `/apis/policy/v1/namespaces/${segment(namespace)}/poddisruptionbudgets`;

export function kubeNamespaceApi({ json }: KubeClients): NamespaceApi {
  return {
    async isTerminating(namespace) {
      const found = (await requestUnlessGone('Get', `namespace ${namespace}`, () =>
        json({ method: 'GET', path: `/api/v1/namespaces/${segment(namespace)}` }),
      )) as { metadata?: { deletionTimestamp?: string } } | undefined;
      return found === undefined || found.metadata?.deletionTimestamp !== undefined;
    },
  };
}
