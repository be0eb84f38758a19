/** ReferenceApi over client-node: consistent LISTs by the `spec.sandbox` selectable field. */
import { API_VERSION, SESSION_REFERENCE } from '../../api/names.ts';
import type { SessionReference } from '../../api/objects.ts';
import { parseSessionReference, type Parsed } from '../../api/parse.ts';
import { request, requestUnlessGone } from '../errors.ts';
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
    async delete(namespace, name) {
      const [group, version] = API_VERSION.split('/') as [string, string];
      await requestUnlessGone('Delete', `sessionreference ${namespace}/${name}`, () =>
        custom.deleteNamespacedCustomObject({
          group,
          version,
          plural: SESSION_REFERENCE.plural,
          namespace,
          name,
        }),
      );
    },
  };
}
