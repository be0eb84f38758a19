/** ReferenceApi on the plain-JSON client: consistent LISTs by the `spec.sandbox` selectable field. */
import { PatchStrategy } from '@kubernetes/client-node';
import { API_VERSION, SESSION_REFERENCE } from '../../api/names.ts';
import { parseSessionReference } from '../../api/parse.ts';
import { KubeRequestError, request, requestUnlessGone } from '../../kube/errors.ts';
import { segment, type JsonClient } from '../../kube/plain-json.ts';
import type { Deleted, ListedReference, ReferenceApi } from '../ports.ts';
import { noticeKey, type DisruptionNotice } from '../../api/session-reference.ts';
import { noticeWrite } from '../disruption-notice.ts';
import { FIELD_MANAGER, type KubeClients } from '../../kube/clients.ts';

const referencesPath = (namespace: string) =>
  `/apis/${API_VERSION}/namespaces/${segment(namespace)}/${SESSION_REFERENCE.plural}`;

/** A consistent LIST (no resourceVersion: the API server reads etcd) by field selector; its items as sent. */
async function listItems(json: JsonClient, namespace: string, selector: string, what: string) {
  const list = (await request('List', what, () =>
    json({ method: 'GET', path: referencesPath(namespace), query: { fieldSelector: selector } }),
  )) as { items?: unknown[] } | undefined;
  return list?.items ?? [];
}

export function kubeReferenceApi(clients: KubeClients): ReferenceApi {
  const { json } = clients;
  return {
    async listLive(namespace, sandbox) {
      // One request, no limit: the API server (v1.36) answers a field-selected LIST with `limit` with a full
      // page and no continue token, which would silently drop every reference past the first page. A
      // sandbox's references are bounded (past 512 it overflows), so the whole list is one response.
      const items = await listItems(
        json,
        namespace,
        `spec.sandbox=${sandbox}`,
        `sessionreferences of ${namespace}/${sandbox}`,
      );
      return items.map((item) => parseSessionReference(item));
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
    async noticeDisruption(namespace, sandbox, wanted) {
      const written: string[] = [];
      const changed: string[] = [];
      if (wanted.kind === 'Unchanged') return { written, changed };
      const items = (await listItems(
        json,
        namespace,
        `spec.sandbox=${sandbox}`,
        `sessionreferences of ${namespace}/${sandbox}`,
      )) as Noticeable[];
      const writes = items.flatMap((item) => {
        const state = item.spec?.state === 'Detached' ? 'Detached' : 'Attached';
        const notice = noticeWrite(wanted, state, noticeKey(item.status?.disruption));
        const name = item.metadata?.name ?? '';
        return notice === undefined ? [] : [{ name, notice, version: item.metadata?.resourceVersion ?? '' }];
      });
      for (let start = 0; start < writes.length; start += DELETES_IN_FLIGHT)
        await Promise.all(
          writes.slice(start, start + DELETES_IN_FLIGHT).map(async ({ name, notice, version }) => {
            try {
              // Merge patch on the version listed: only status.disruption changes, and only on what was read.
              await requestUnlessGone('PatchStatus', `sessionreference ${namespace}/${name}`, () =>
                json({
                  method: 'PATCH',
                  path: `${referencesPath(namespace)}/${segment(name)}/status`,
                  query: { fieldManager: FIELD_MANAGER },
                  body: { metadata: { resourceVersion: version }, status: { disruption: notice } },
                  contentType: PatchStrategy.MergePatch,
                }),
              );
              written.push(name);
            } catch (error) {
              if (!(error instanceof KubeRequestError && error.conflict)) throw error;
              changed.push(name);
            }
          }),
        );
      return { written, changed };
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
type Noticeable = Listed & {
  spec?: { state?: unknown };
  status?: { disruption?: DisruptionNotice };
};

/** A consistent LIST by `selector`: what each preconditioned delete needs. */
async function listFor(
  { json }: KubeClients,
  namespace: string,
  selector: string,
  what: string,
): Promise<ListedReference[]> {
  const items = await listItems(json, namespace, selector, what);
  return (items as Listed[]).map(({ metadata }) => ({
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
  { json }: KubeClients,
  namespace: string,
  items: readonly ListedReference[],
): Promise<Deleted> {
  const deleted: string[] = [];
  const changed: string[] = [];
  for (let start = 0; start < items.length; start += DELETES_IN_FLIGHT) {
    await Promise.all(
      items.slice(start, start + DELETES_IN_FLIGHT).map(async ({ name, uid, resourceVersion }) => {
        try {
          await requestUnlessGone('Delete', `sessionreference ${namespace}/${name}`, () =>
            json({
              method: 'DELETE',
              path: `${referencesPath(namespace)}/${segment(name)}`,
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
