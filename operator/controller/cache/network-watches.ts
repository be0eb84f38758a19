/**
 * The watches a sandbox's network isolation is kept by: its NetworkPolicy, cached (network-policies.ts), and
 * the API server's endpoints the policy opens (api-server-endpoints.ts), both read by the turn instead of a
 * live GET once synced; and its namespace's opt-out label set or removed (unmanaged-network-namespaces.ts),
 * which only brings the turns (the turn reads the label live).
 */
import type { WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import { ApiServerEndpoints, apiServerSliceResource } from './api-server-endpoints.ts';
import { NetworkPolicyCache, networkPolicyResource } from './network-policies.ts';
import { LabelledNamespaces } from './labelled-namespaces.ts';
import { unmanagedNetworkResource } from './unmanaged-network-namespaces.ts';

export type NetworkWatches = {
  readonly policies: NetworkPolicyCache;
  readonly policyResource: WatchedResource;
  readonly endpoints: ApiServerEndpoints;
  readonly sliceResource: WatchedResource;
  /** The namespaces' opt-out label: turns only, nothing cached. */
  readonly labelSinks: [WatchedResource, WatchSink][];
};

export function networkWatches(
  watchNamespace: string | undefined,
  enqueue: (sandboxKey: string) => void,
  sandboxKeys: () => Iterable<string>,
): NetworkWatches {
  const policies = new NetworkPolicyCache(enqueue);
  // The API server moved: every policy opens its old addresses, so each is rewritten by its sandbox's turn.
  const endpoints = new ApiServerEndpoints(() => {
    for (const key of policies.sandboxKeys()) enqueue(key);
  });
  return {
    policies,
    policyResource: networkPolicyResource(watchNamespace),
    endpoints,
    sliceResource: apiServerSliceResource,
    labelSinks: [
      [
        unmanagedNetworkResource(watchNamespace),
        new LabelledNamespaces((namespace) => {
          for (const key of sandboxKeys()) if (key.startsWith(`${namespace}/`)) enqueue(key);
        }),
      ],
    ],
  };
}
