/**
 * The watch of namespaces an administrator labelled `sandbox.agents.dev/network-unmanaged=allowed`: a namespace
 * labelled or unlabelled brings its sandboxes' reconciles, so an Unmanaged sandbox loses (or gets back) the
 * operator's NetworkPolicy at once. The decision itself reads the namespace live (network-isolation.ts); this
 * only says when to look. The selector names the value, so a label removed or changed is a DELETED event;
 * the namespaces selected are kept as every label-selected set is (labelled-namespaces.ts).
 */
import { NETWORK_UNMANAGED_ALLOWED, NETWORK_UNMANAGED_LABEL } from '../../api/network.ts';
import type { WatchedResource } from '../../runtime/watcher.ts';

export function unmanagedNetworkResource(watchNamespace: string | undefined): WatchedResource {
  return {
    name: 'network-unmanaged-namespaces',
    apiVersion: 'v1',
    kind: 'Namespace',
    path: '/api/v1/namespaces',
    labelSelector: `${NETWORK_UNMANAGED_LABEL}=${NETWORK_UNMANAGED_ALLOWED}`,
    ...(watchNamespace === undefined ? {} : { fieldSelector: `metadata.name=${watchNamespace}` }),
  };
}
