/** ReferenceApi over client-node: consistent LISTs by the `spec.sandbox` selectable field. */
import { API_VERSION, SESSION_REFERENCE } from '../../api/names.ts';
import { parseSessionReference } from '../../api/parse.ts';
import { KubeRequestError, request, requestUnlessGone } from '../../kube/errors.ts';
import type { Deleted, ListedReference, ReferenceApi } from '../ports.ts';
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
    async deleteAll(namespace, sandbox, listed) {
      const items =
        listed ??
        (await listFor(
          clients,
          namespace,
          `spec.sandbox=${sandbox}`,
          `references of ${namespace}/${sandbox}`,
        ));
      return deleteListed(clients, namespace, items);
    },
    async pruneTombstones(namespace, sandbox, worktree) {
      const items = await listFor(
        clients,
        namespace,
        `spec.sandbox=${sandbox},spec.worktree=${worktree},spec.state=Detached`,
        `tombstones of ${namespace}/${sandbox} from ${worktree}`,
      );
      return deleteListed(clients, namespace, items);
    },
  };
}

/** In flight at once: an erase of a full index (512 references) is 32 rounds, not 512. */
const DELETES_IN_FLIGHT = 16;

type Listed = { metadata?: { name?: string; uid?: string; resourceVersion?: string } };

/** A consistent LIST by `selector`: what each preconditioned delete needs. */
async function listFor(
  { objects }: KubeClients,
  namespace: string,
  selector: string,
  what: string,
): Promise<ListedReference[]> {
  const list = await request('List', what, () =>
    objects.list(API_VERSION, SESSION_REFERENCE.kind, namespace, undefined, undefined, undefined, selector),
  );
  return (list.items as Listed[]).map(({ metadata }) => ({
    name: metadata?.name ?? '',
    uid: metadata?.uid ?? '',
    resourceVersion: metadata?.resourceVersion ?? '',
  }));
}

/**
 * Deletes what a consistent LIST returned, each item preconditioned on the uid and resourceVersion listed:
 * unlike a DELETE collection, a reference changed after the LIST (re-attached) is kept and reported, never
 * taken.
 */
async function deleteListed(
  { custom }: KubeClients,
  namespace: string,
  items: readonly ListedReference[],
): Promise<Deleted> {
  const [group, version] = API_VERSION.split('/') as [string, string];
  const deleted: string[] = [];
  const changed: string[] = [];
  for (let start = 0; start < items.length; start += DELETES_IN_FLIGHT) {
    await Promise.all(
      items.slice(start, start + DELETES_IN_FLIGHT).map(async ({ name, uid, resourceVersion }) => {
        try {
          await requestUnlessGone('Delete', `sessionreference ${namespace}/${name}`, () =>
            custom.deleteNamespacedCustomObject({
              group,
              version,
              plural: SESSION_REFERENCE.plural,
              namespace,
              name,
              body: { preconditions: { uid, resourceVersion } },
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
