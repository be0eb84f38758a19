/** WarmPoolApi over the API server, as plain JSON. */
import { PatchStrategy } from '@kubernetes/client-node';
import { GROUP, SANDBOX, SANDBOX_TEMPLATE, SANDBOX_WARM_POOL, VERSION } from '../../api/names.ts';
import { parseSandboxTemplate } from '../../api/parse.ts';
import { KubeRequestError, request } from '../../kube/errors.ts';
import { segment } from '../../kube/plain-json.ts';
import { FIELD_MANAGER, type KubeClients } from '../../kube/clients.ts';
import type { WarmPoolApi } from '../warm-pool/ports.ts';

const collection = (namespace: string, plural: string) =>
  `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${plural}`;
const objectPath = (namespace: string, plural: string, name: string) =>
  `${collection(namespace, plural)}/${segment(name)}`;

export function kubeWarmPoolApi({ json }: KubeClients): WarmPoolApi {
  return {
    async readTemplate(namespace, name) {
      try {
        const live = await request('Get', `sandboxtemplate ${namespace}/${name}`, () =>
          json({ method: 'GET', path: objectPath(namespace, SANDBOX_TEMPLATE.plural, name) }),
        );
        const parsed = parseSandboxTemplate(live);
        if (!parsed.ok) throw parsed.error;
        const { metadata, spec } = parsed.value;
        return { name, generation: metadata.generation ?? 0, spec };
      } catch (error) {
        if (error instanceof KubeRequestError && error.notFound) return undefined;
        throw error;
      }
    },
    async createSandbox(namespace, manifest) {
      try {
        await request('Create', `sandbox in ${namespace}`, () =>
          json({
            method: 'POST',
            path: collection(namespace, SANDBOX.plural),
            query: { fieldManager: FIELD_MANAGER },
            body: manifest,
          }),
        );
        return true;
      } catch (error) {
        if (error instanceof KubeRequestError && error.status === 409) return false;
        throw error;
      }
    },
    async deleteSandbox(namespace, name, preconditions) {
      try {
        await request('Delete', `sandbox ${namespace}/${name}`, () =>
          json({
            method: 'DELETE',
            path: objectPath(namespace, SANDBOX.plural, name),
            body: { preconditions },
          }),
        );
        return 'Deleted';
      } catch (error) {
        if (error instanceof KubeRequestError && error.notFound) return 'Gone';
        if (error instanceof KubeRequestError && error.conflict) return 'Changed';
        throw error;
      }
    },
    async patchStatus(namespace, name, uid, status) {
      await request('PatchStatus', `sandboxwarmpool ${namespace}/${name}`, () =>
        json({
          method: 'PATCH',
          path: `${objectPath(namespace, SANDBOX_WARM_POOL.plural, name)}/status`,
          query: { fieldManager: FIELD_MANAGER },
          // The uid test keeps a status computed for one pool off a namesake made since.
          body: [
            { op: 'test', path: '/metadata/uid', value: uid },
            { op: 'add', path: '/status', value: status },
          ],
          contentType: PatchStrategy.JsonPatch,
        }),
      );
    },
  };
}
