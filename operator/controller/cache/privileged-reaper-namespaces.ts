/**
 * The namespaces an administrator opted in to the shell reaper's Privileged mode (issue 26 #2), from a watch
 * of Namespaces labelled `sandbox.agents.dev/shell-reaper-privileged=allowed`: the sandbox pod builder asks
 * it before it runs a root sidecar (operator/sidecar/injection/mode.ts). The selector names the value, so a
 * namespace whose label is removed or changed leaves the selection (the watch says DELETED) and is no
 * longer opted in. One watch, a name per opted-in namespace.
 */
import type { WatchEventType, WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import { PRIVILEGED_REAPER_ALLOWED, PRIVILEGED_REAPER_LABEL } from '../../sidecar/injection/mode.ts';

type NamespaceLike = { metadata?: { name?: unknown } };

/** The opted-in namespaces: all of them, or only the one the operator watches. */
export function privilegedReaperResource(watchNamespace: string | undefined): WatchedResource {
  return {
    name: 'privileged-reaper-namespaces',
    apiVersion: 'v1',
    kind: 'Namespace',
    path: '/api/v1/namespaces',
    labelSelector: `${PRIVILEGED_REAPER_LABEL}=${PRIVILEGED_REAPER_ALLOWED}`,
    ...(watchNamespace === undefined ? {} : { fieldSelector: `metadata.name=${watchNamespace}` }),
  };
}

export class PrivilegedReaperNamespaces implements WatchSink {
  readonly #names = new Set<string>();

  /** `onChange` hears each namespace opted in or out (its sandboxes may now get, or lose, their pods). */
  constructor(private readonly onChange: (namespace: string) => void = () => undefined) {}

  allows(namespace: string): boolean {
    return this.#names.has(namespace);
  }

  replace(items: readonly unknown[]): void {
    const before = new Set(this.#names);
    this.#names.clear();
    for (const item of items) {
      const name = nameOf(item);
      if (name !== undefined) this.#names.add(name);
    }
    for (const name of new Set([...before, ...this.#names]))
      if (before.has(name) !== this.#names.has(name)) this.onChange(name);
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
  const name = (object as NamespaceLike | undefined)?.metadata?.name;
  return typeof name === 'string' ? name : undefined;
}
