/**
 * The names of the namespaces a label-selected watch of Namespaces returns: the selector names the value, so
 * a namespace whose label is removed or changed leaves the selection (the watch says DELETED). One watch, a
 * name per selected namespace. The Privileged-mode opt-in (privileged-reaper-namespaces.ts) and the
 * per-namespace management opt-in (managed-namespaces.ts) and the network opt-out
 * (unmanaged-network-namespaces.ts) are such sets.
 */
import type { WatchEventType, WatchSink } from '../../runtime/watcher.ts';

type NamespaceLike = { metadata?: { name?: unknown } };

export class LabelledNamespaces implements WatchSink {
  readonly #names = new Set<string>();

  /** `onChange` hears each namespace that enters or leaves the selection (its sandboxes may change course). */
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
