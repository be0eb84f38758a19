/**
 * The watch of the sandboxes' workspace claims (labelled with their sandbox): which sandbox names have a
 * claim that still holds our finalizer. A Sandbox that went without our release (its finalizer stripped while
 * its namespace terminates) leaves such claims behind, and nothing else would bring its turn again: a
 * suspended sandbox has no pod, and a restarted operator lists no Sandbox that is gone. So every change of a
 * claim, and every relist, enqueues its sandbox; the turn of a gone one releases them where the namespace
 * terminates (deletion/orphans.ts). A live sandbox's turn also hears at once of a claim deleted or changed.
 * Only names are kept, never a claim's spec.
 */
import { EXCLUSIVITY_FINALIZER, LABELS } from '../../api/names.ts';
import type { WatchEventType, WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import { keyOf } from './store-records.ts';

type ClaimLike = {
  metadata?: { namespace?: unknown; name?: unknown; labels?: Record<string, unknown>; finalizers?: unknown };
};

export function claimResource(watchNamespace: string | undefined): WatchedResource {
  const scope = watchNamespace === undefined ? '' : `/namespaces/${watchNamespace}`;
  return {
    name: 'persistentvolumeclaims',
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    path: `/api/v1${scope}/persistentvolumeclaims`,
    labelSelector: LABELS.sandbox,
    ...(watchNamespace === undefined ? {} : { namespace: watchNamespace }),
  };
}

/** The claim's sandbox key and name, and whether it holds our finalizer; undefined for anything else. */
function claimOf(object: unknown): { key: string; name: string; held: boolean } | undefined {
  const metadata = (object as ClaimLike | null | undefined)?.metadata;
  const sandbox = metadata?.labels?.[LABELS.sandbox];
  const { namespace, name } = metadata ?? {};
  if (typeof sandbox !== 'string' || typeof namespace !== 'string' || typeof name !== 'string')
    return undefined;
  const finalizers = Array.isArray(metadata?.finalizers) ? (metadata.finalizers as unknown[]) : [];
  return { key: keyOf(namespace, sandbox), name, held: finalizers.includes(EXCLUSIVITY_FINALIZER) };
}

export class HeldClaims implements WatchSink {
  /** Sandbox key → names of its claims that hold our finalizer. */
  #held = new Map<string, Set<string>>();

  constructor(private readonly enqueue: (sandboxKey: string) => void) {}

  /** Whether a claim of this sandbox name still holds our finalizer, as last seen. */
  holds(sandboxKey: string): boolean {
    return (this.#held.get(sandboxKey)?.size ?? 0) > 0;
  }

  replace(items: readonly unknown[]): void {
    const before = this.#held;
    this.#held = new Map();
    for (const item of items) this.#set(claimOf(item));
    for (const key of new Set([...before.keys(), ...this.#held.keys()])) this.enqueue(key);
  }

  apply(type: WatchEventType, object: unknown): void {
    const claim = claimOf(object);
    if (claim === undefined) return;
    this.#set(type === 'DELETED' ? { ...claim, held: false } : claim);
    this.enqueue(claim.key);
  }

  #set(claim: { key: string; name: string; held: boolean } | undefined): void {
    if (claim === undefined) return;
    const names = this.#held.get(claim.key) ?? new Set<string>();
    if (claim.held) names.add(claim.name);
    else names.delete(claim.name);
    if (names.size > 0) this.#held.set(claim.key, names);
    else this.#held.delete(claim.key);
  }
}
