/** ClaimApi over the API server, as plain JSON: the persistent workspace's PersistentVolumeClaims. */
import { PatchStrategy, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { LABELS } from '../../api/names.ts';
import { KubeRequestError, request, requestUnlessGone } from '../../kube/errors.ts';
import { FIELD_MANAGER, type KubeClients } from '../../kube/clients.ts';
import { segment } from '../../kube/plain-json.ts';
import type { ClaimHolder } from '../claims.ts';
import type { JsonPatchOp } from '../finalizer.ts';
import type { ClaimApi } from '../ports.ts';

const claimsPath = (namespace: string) => `/api/v1/namespaces/${segment(namespace)}/persistentvolumeclaims`;

export function kubeClaimApi({ json }: KubeClients): ClaimApi {
  const read = async (namespace: string, name: string) => {
    const found = await requestUnlessGone('Get', `persistentvolumeclaim ${namespace}/${name}`, () =>
      json({ method: 'GET', path: `${claimsPath(namespace)}/${segment(name)}` }),
    );
    return found === undefined ? undefined : claimHolderOf(found);
  };
  return {
    read,
    async create(claim: V1PersistentVolumeClaim) {
      const namespace = claim.metadata?.namespace ?? '';
      const name = claim.metadata?.name ?? '';
      try {
        await request('Create', `persistentvolumeclaim ${namespace}/${name}`, () =>
          json({
            method: 'POST',
            path: claimsPath(namespace),
            query: { fieldManager: FIELD_MANAGER },
            body: claim,
          }),
        );
        return 'Created';
      } catch (error) {
        if (!(error instanceof KubeRequestError && error.status === 409)) throw error;
      }
      const holder = await read(namespace, name);
      return holder === undefined ? 'Created' : { taken: holder };
    },
    async listLive(namespace, sandbox) {
      const list = (await request('List', `persistentvolumeclaims of ${namespace}/${sandbox}`, () =>
        json({
          method: 'GET',
          path: claimsPath(namespace),
          query: { labelSelector: `${LABELS.sandbox}=${sandbox}` },
        }),
      )) as { items?: unknown[] } | undefined;
      return (list?.items ?? []).map(claimHolderOf);
    },
    async delete(namespace, name, uid) {
      await requestUnlessGone('Delete', `persistentvolumeclaim ${namespace}/${name}`, () =>
        json({
          method: 'DELETE',
          path: `${claimsPath(namespace)}/${segment(name)}`,
          body: { preconditions: { uid } },
        }),
      );
    },
    async patchMetadata(namespace, name, ops: readonly JsonPatchOp[]) {
      await requestUnlessGone('Patch', `persistentvolumeclaim ${namespace}/${name}`, () =>
        json({
          method: 'PATCH',
          path: `${claimsPath(namespace)}/${segment(name)}`,
          query: { fieldManager: FIELD_MANAGER },
          body: ops,
          contentType: PatchStrategy.JsonPatch,
        }),
      );
    },
  };
}

type RawClaim = {
  metadata?: {
    name?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: unknown;
    ownerReferences?: Record<string, unknown>[];
  };
};

export function claimHolderOf(raw: unknown): ClaimHolder {
  const meta = (raw as RawClaim | null)?.metadata;
  const owners = meta?.ownerReferences ?? [];
  const controller = owners.find((owner) => owner['controller'] === true);
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return {
    name: meta?.name ?? '',
    uid: meta?.uid ?? '',
    resourceVersion: meta?.resourceVersion ?? '',
    sandboxLabel: meta?.labels?.[LABELS.sandbox],
    labelled: Object.keys(meta?.labels ?? {}).length > 0,
    controller: controller
      ? { kind: text(controller['kind']), name: text(controller['name']), uid: text(controller['uid']) }
      : undefined,
    ownerReferences: owners,
    finalizers: meta?.finalizers ?? [],
    deleting: meta?.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
  };
}
