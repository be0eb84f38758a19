/** ReferenceApi over client-node: consistent LISTs by the `spec.sandbox` selectable field. */
import { API_VERSION, SESSION_REFERENCE } from '../../api/names.ts';
import type { SessionReference } from '../../api/objects.ts';
import { parseSessionReference, type Parsed } from '../../api/parse.ts';
import { request } from '../errors.ts';
import type { ReferenceApi } from '../ports.ts';
import type { KubeClients } from './clients.ts';

const PAGE = 500;

export function kubeReferenceApi({ objects, custom }: KubeClients): ReferenceApi {
  return {
    async listLive(namespace, sandbox) {
      const found: Parsed<SessionReference>[] = [];
      let continueToken: string | undefined;
      do {
        const page = await request('List', `sessionreferences of ${namespace}/${sandbox}`, () =>
          objects.list(
            API_VERSION,
            SESSION_REFERENCE.kind,
            namespace,
            undefined,
            undefined,
            undefined,
            `spec.sandbox=${sandbox}`,
            undefined,
            PAGE,
            continueToken,
          ),
        );
        found.push(...page.items.map((item) => parseSessionReference(item)));
        continueToken = page.metadata?._continue || undefined;
      } while (continueToken);
      return found;
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
