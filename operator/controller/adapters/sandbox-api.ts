/** SandboxApi over client-node. */
import { GROUP, SANDBOX, VERSION } from '../../api/names.ts';
import { KubeRequestError, request, requestUnlessGone } from '../../kube/errors.ts';
import { incarnationTest, type JsonPatchOp } from '../finalizer.ts';
import type { SandboxApi } from '../ports.ts';
import { statusPatchOps } from '../status.ts';
import { FIELD_MANAGER, JSON_PATCH, type KubeClients } from '../../kube/clients.ts';

export function kubeSandboxApi({ custom }: KubeClients): SandboxApi {
  const at = (namespace: string, name: string) => ({
    group: GROUP,
    version: VERSION,
    plural: SANDBOX.plural,
    namespace,
    name,
  });
  return {
    async readLive(namespace, name) {
      try {
        const live = (await request('Get', `sandbox ${namespace}/${name}`, () =>
          custom.getNamespacedCustomObject(at(namespace, name)),
        )) as { metadata?: { uid?: string; deletionTimestamp?: unknown } };
        const deletion = live.metadata?.deletionTimestamp;
        return { uid: live.metadata?.uid ?? '', deleting: deletion !== undefined && deletion !== null };
      } catch (error) {
        if (error instanceof KubeRequestError && error.notFound) return undefined;
        throw error;
      }
    },
    async patchStatus({ namespace, name, uid }, before, changed) {
      await request('PatchStatus', `sandbox ${namespace}/${name}`, () =>
        custom.patchNamespacedCustomObjectStatus(
          { ...at(namespace, name), body: statusPatchOps(uid, before, changed), fieldManager: FIELD_MANAGER },
          JSON_PATCH,
        ),
      );
    },
    async patchMetadata({ namespace, name, uid }, ops: readonly JsonPatchOp[]) {
      const written = (await request('PatchFinalizers', `sandbox ${namespace}/${name}`, () =>
        custom.patchNamespacedCustomObject(
          { ...at(namespace, name), body: [incarnationTest(uid), ...ops], fieldManager: FIELD_MANAGER },
          JSON_PATCH,
        ),
      )) as { metadata?: { resourceVersion?: string } };
      return { resourceVersion: written.metadata?.resourceVersion ?? '' };
    },
    async delete(namespace, name, preconditions) {
      await requestUnlessGone('Delete', `sandbox ${namespace}/${name}`, () =>
        custom.deleteNamespacedCustomObject({ ...at(namespace, name), body: { preconditions } }),
      );
    },
  };
}
