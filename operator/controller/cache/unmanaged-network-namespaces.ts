/**
 * The watch of namespaces an administrator labelled `sandbox.agents.dev/network-unmanaged=allowed`: a namespace
 * labelled or unlabelled brings its sandboxes' reconciles, so an Unmanaged sandbox loses (or gets back) the
 * operator's NetworkPolicy at once. The decision itself reads the namespace live (network-isolation.ts); this
 * only says when to look. The selector names the value, so a label removed or changed is a DELETED event.
 */
import { NETWORK_UNMANAGED_ALLOWED, NETWORK_UNMANAGED_LABEL } from '../../api/network.ts';
import type { WatchEventType, WatchSink, WatchedResource } from '../../runtime/watcher.ts';

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

export class UnmanagedNetworkNamespaces implements WatchSink {
  #names = new Set<string>();

  /** `onChange` hears each namespace that gained or lost the label. */
  constructor(private readonly onChange: (namespace: string) => void) {}

  replace(items: readonly unknown[]): void {
    const listed = new Set(items.flatMap((item) => nameOf(item) ?? []));
    for (const name of new Set([...this.#names, ...listed]))
      if (this.#names.has(name) !== listed.has(name)) this.onChange(name);
    this.#names = listed;
  }

  apply(type: WatchEventType, object: unknown): void {
    const name = nameOf(object);
    if (name === undefined) return;
    const before = this.#names.has(name);
    if (type === 'DELETED') this.#names.delete(name);
    else this.#names.add(name);
    if (before !== this.#names.has(name)) this.onChange(name);
  }
}

function nameOf(object: unknown): string | undefined {
  const name = (object as { metadata?: { name?: unknown } } | null | undefined)?.metadata?.name;
  return typeof name === 'string' ? name : undefined;
}
