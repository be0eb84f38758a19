/**
 * The watches that bring a sandbox's network isolation back into line at once rather than at the resync: its
 * NetworkPolicy changed or deleted (network-policy-events.ts), and its namespace's opt-out label set or
 * removed (unmanaged-network-namespaces.ts). Neither caches anything a decision reads.
 */
import type { WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import { NetworkPolicyEvents, networkPolicyResource } from './network-policy-events.ts';
import { LabelledNamespaces } from './labelled-namespaces.ts';
import { unmanagedNetworkResource } from './unmanaged-network-namespaces.ts';

export function networkWatches(
  watchNamespace: string | undefined,
  enqueue: (sandboxKey: string) => void,
  sandboxKeys: () => Iterable<string>,
): [WatchedResource, WatchSink][] {
  return [
    [networkPolicyResource(watchNamespace), new NetworkPolicyEvents(enqueue)],
    [
      unmanagedNetworkResource(watchNamespace),
      new LabelledNamespaces((namespace) => {
        for (const key of sandboxKeys()) if (key.startsWith(`${namespace}/`)) enqueue(key);
      }),
    ],
  ];
}
