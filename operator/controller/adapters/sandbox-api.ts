/** SandboxApi over client-node. */
import { GROUP, SANDBOX, VERSION } from '../../api/names.ts';
import { request, requestUnlessGone } from '../../kube/errors.ts';
import type { JsonPatchOp } from '../finalizer.ts';
import type { SandboxApi } from '../ports.ts';
import { FIELD_MANAGER, JSON_PATCH, MERGE_PATCH, type KubeClients } from '../../kube/clients.ts';

export function kubeSandboxApi({ custom }: KubeClients): SandboxApi {
  const at = (namespace: string, name: string) => ({
    group: GROUP,
    version: VERSION,
    plural: SANDBOX.plural,
    namespace,
    name,
  });
  return {
    async patchStatus(namespace, name, patch) {
      await request('PatchStatus', `sandbox ${namespace}/${name}`, () =>
        custom.patchNamespacedCustomObjectStatus(
          { ...at(namespace, name), body: { status: patch }, fieldManager: FIELD_MANAGER },
          MERGE_PATCH,
        ),
      );
    },
    async patchMetadata(namespace, name, ops: readonly JsonPatchOp[]) {
      const written = (await request('PatchFinalizers', `sandbox ${namespace}/${name}`, () =>
        custom.patchNamespacedCustomObject(
          { ...at(namespace, name), body: ops, fieldManager: FIELD_MANAGER },
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
