/** The resources the store is filled from (cache/store.ts), each with the store's sink for it. */
import { API_VERSION, GROUP, LABELS, SANDBOX, SESSION_REFERENCE, VERSION } from '../../api/names.ts';
import type { WatchedResource } from '../../runtime/watcher.ts';

export type StoreSink = 'sandboxSink' | 'referenceSink' | 'podSink' | 'budgetSink';

export function storeResources(namespace: string | undefined): [WatchedResource, StoreSink][] {
  const scope = namespace ? `/namespaces/${namespace}` : '';
  const ns = namespace ? { namespace } : {};
  return [
    [
      {
        name: SANDBOX.plural,
        apiVersion: API_VERSION,
        kind: SANDBOX.kind,
        path: `/apis/${GROUP}/${VERSION}${scope}/${SANDBOX.plural}`,
        ...ns,
      },
      'sandboxSink',
    ],
    [
      {
        name: SESSION_REFERENCE.plural,
        apiVersion: API_VERSION,
        kind: SESSION_REFERENCE.kind,
        path: `/apis/${GROUP}/${VERSION}${scope}/${SESSION_REFERENCE.plural}`,
        ...ns,
      },
      'referenceSink',
    ],
    [
      {
        name: 'pods',
        apiVersion: 'v1',
        kind: 'Pod',
        path: `/api/v1${scope}/pods`,
        labelSelector: LABELS.sandbox,
        ...ns,
      },
      'podSink',
    ],
    [
      {
        name: 'poddisruptionbudgets',
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        path: `/apis/policy/v1${scope}/poddisruptionbudgets`,
        labelSelector: LABELS.sandbox,
        ...ns,
      },
      'budgetSink',
    ],
  ];
}
