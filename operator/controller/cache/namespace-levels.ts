/**
 * The PodSecurity `enforce` level of each namespace, from a watch of Namespaces (issue 12): the sandbox pod
 * builder fits the shell reaper's mode to it (operator/sidecar/injection/mode.ts). The watch selects only
 * namespaces that carry the label, and the cache keeps one level per name, so it costs one watch and a few
 * bytes per labelled namespace, not a GET per reconcile. A namespace that loses the label leaves the
 * selection (the watch says DELETED): its level is unknown again, and PodSecurity admission judges the pod.
 */
import type { WatchEventType, WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import {
  POD_SECURITY_ENFORCE_LABEL,
  podSecurityLevelOf,
  type PodSecurityLevel,
} from '../../sidecar/injection/mode.ts';

type NamespaceLike = { metadata?: { name?: unknown; labels?: unknown } };

/** Namespaces with an enforce label: all of them, or only the one the operator watches. */
export function namespaceLevelResource(watchNamespace: string | undefined): WatchedResource {
  return {
    name: 'namespaces',
    apiVersion: 'v1',
    kind: 'Namespace',
    path: '/api/v1/namespaces',
    labelSelector: POD_SECURITY_ENFORCE_LABEL,
    ...(watchNamespace === undefined ? {} : { fieldSelector: `metadata.name=${watchNamespace}` }),
  };
}

export class NamespaceLevels implements WatchSink {
  readonly #levels = new Map<string, PodSecurityLevel>();

  /** `onChange` hears each namespace whose level changed (its sandboxes may now get their pods). */
  constructor(private readonly onChange: (namespace: string) => void = () => undefined) {}

  levelOf(namespace: string): PodSecurityLevel | undefined {
    return this.#levels.get(namespace);
  }

  get size(): number {
    return this.#levels.size;
  }

  replace(items: readonly unknown[]): void {
    const before = new Map(this.#levels);
    this.#levels.clear();
    for (const item of items) {
      const entry = entryOf(item);
      if (entry?.level !== undefined) this.#levels.set(entry.name, entry.level);
    }
    for (const name of new Set([...before.keys(), ...this.#levels.keys()]))
      if (before.get(name) !== this.#levels.get(name)) this.onChange(name);
  }

  apply(type: WatchEventType, object: unknown): void {
    const entry = entryOf(object);
    if (entry === undefined) return;
    const before = this.#levels.get(entry.name);
    const level = type === 'DELETED' ? undefined : entry.level;
    if (level === undefined) this.#levels.delete(entry.name);
    else this.#levels.set(entry.name, level);
    if (before !== level) this.onChange(entry.name);
  }
}

function entryOf(object: unknown): { name: string; level: PodSecurityLevel | undefined } | undefined {
  const metadata = (object as NamespaceLike | undefined)?.metadata;
  if (typeof metadata?.name !== 'string') return undefined;
  const labels = isStringRecord(metadata.labels) ? metadata.labels : undefined;
  return { name: metadata.name, level: podSecurityLevelOf(labels) };
}

const isStringRecord = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'string');
