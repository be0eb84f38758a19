/** ReferenceApi over client-node: consistent LISTs by the `spec.sandbox` selectable field. */
import { API_VERSION, SESSION_REFERENCE } from '../../api/names.ts';
import { parseSessionReference } from '../../api/parse.ts';
import { request } from '../../kube/errors.ts';
import type { ReferenceApi } from '../ports.ts';
import type { KubeClients } from '../../kube/clients.ts';

export function kubeReferenceApi({ objects, custom }: KubeClients): ReferenceApi {
  return {
    async listLive(namespace, sandbox) {
      // One request, no limit: the API server (v1.36) answers a field-selected LIST with `limit` with a full
      // page and no continue token, which would silently drop every reference past the first page. A
      // sandbox's references are bounded (past 512 it overflows), so the whole list is one response.
      const list = await request('List', `sessionreferences of ${namespace}/${sandbox}`, () =>
        objects.list(
          API_VERSION,
          SESSION_REFERENCE.kind,
          namespace,
          undefined,
          undefined,
          undefined,
          `spec.sandbox=${sandbox}`,
        ),
      );
      return list.items.map((item) => parseSessionReference(item));
    },
    async deleteAll(namespace, sandbox) {
      const [group, version] = API_VERSION.split('/') as [string, string];
      await request('Delete', `sessionreferences of ${namespace}/${sandbox}`, () =>
        custom.deleteCollectionNamespacedCustomObject({
          group,
          version,
          plural: SESSION_REFERENCE.plural,
          namespace,
          fieldSelector: `spec.sandbox=${sandbox}`,
        }),
      );
    },
    async pruneTombstones(namespace, sandbox, worktree) {
      const [group, version] = API_VERSION.split('/') as [string, string];
      await request('Delete', `tombstones of ${namespace}/${sandbox} from ${worktree}`, () =>
        custom.deleteCollectionNamespacedCustomObject({
          group,
          version,
          plural: SESSION_REFERENCE.plural,
          namespace,
          fieldSelector: `spec.sandbox=${sandbox},spec.worktree=${worktree},spec.state=Detached`,
        }),
      );
    },
  };
}
