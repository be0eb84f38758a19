/** ReferenceApi over client-node: consistent LISTs by the `spec.sandbox` selectable field. */
import { API_VERSION, SESSION_REFERENCE } from '../../api/names.ts';
import { parseSessionReference } from '../../api/parse.ts';
import { KubeRequestError, request, requestUnlessGone } from '../../kube/errors.ts';
import type { Deleted, ReferenceApi } from '../ports.ts';
import type { KubeClients } from '../../kube/clients.ts';

export function kubeReferenceApi(clients: KubeClients): ReferenceApi {
  const { objects } = clients;
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
      return deleteListed(
        clients,
        namespace,
        `spec.sandbox=${sandbox}`,
        `references of ${namespace}/${sandbox}`,
      );
    },
    async pruneTombstones(namespace, sandbox, worktree) {
      return deleteListed(
        clients,
        namespace,
        `spec.sandbox=${sandbox},spec.worktree=${worktree},spec.state=Detached`,
        `tombstones of ${namespace}/${sandbox} from ${worktree}`,
      );
    },
  };
}

/** In flight at once: an erase of a full index (512 references) is 32 rounds, not 512. */
const DELETES_IN_FLIGHT = 16;

type Listed = { metadata?: { name?: string; uid?: string; resourceVersion?: string } };

/**
 * Deletes what a consistent LIST by `selector` returned, each item preconditioned on the uid and
 * resourceVersion listed: unlike a DELETE collection, a reference changed after the LIST (re-attached) is
 * kept and reported, never taken.
 */
async function deleteListed(
  { objects, custom }: KubeClients,
  namespace: string,
  selector: string,
  what: string,
): Promise<Deleted> {
  const list = await request('List', what, () =>
    objects.list(API_VERSION, SESSION_REFERENCE.kind, namespace, undefined, undefined, undefined, selector),
  );
  const [group, version] = API_VERSION.split('/') as [string, string];
  const deleted: string[] = [];
  const changed: string[] = [];
  const items = list.items as Listed[];
  for (let start = 0; start < items.length; start += DELETES_IN_FLIGHT) {
    await Promise.all(
      items.slice(start, start + DELETES_IN_FLIGHT).map(async ({ metadata }) => {
        const name = metadata?.name ?? '';
        const preconditions = { uid: metadata?.uid ?? '', resourceVersion: metadata?.resourceVersion ?? '' };
        try {
          await requestUnlessGone('Delete', `sessionreference ${namespace}/${name}`, () =>
            custom.deleteNamespacedCustomObject({
              group,
              version,
              plural: SESSION_REFERENCE.plural,
              namespace,
              name,
              body: { preconditions },
            }),
          );
          deleted.push(name);
        } catch (error) {
          if (!(error instanceof KubeRequestError && error.conflict)) throw error;
          changed.push(name);
        }
      }),
    );
  }
  return { deleted, changed };
}
