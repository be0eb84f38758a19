/**
 * The watch of the operator's NetworkPolicies (labelled with the sandbox they isolate): any change to one,
 * its deletion above all, brings its sandbox's reconcile, which puts the policy back (network-isolation.ts)
 * at once rather than at the next resync. Nothing is cached: the turn reads the policy live.
 */
import { LABELS, MANAGED_BY } from '../../api/names.ts';
import type { WatchEventType, WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import { keyOf } from './store-records.ts';

type PolicyLike = { metadata?: { namespace?: unknown; labels?: Record<string, unknown> } };

export function networkPolicyResource(watchNamespace: string | undefined): WatchedResource {
  const scope = watchNamespace === undefined ? '' : `/namespaces/${watchNamespace}`;
  return {
    name: 'networkpolicies',
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    path: `/apis/networking.k8s.io/v1${scope}/networkpolicies`,
    labelSelector: `${LABELS.sandbox},${LABELS.managedBy}=${MANAGED_BY}`,
    ...(watchNamespace === undefined ? {} : { namespace: watchNamespace }),
  };
}

/** The sandbox key a policy's labels name; undefined for anything else. */
export function sandboxKeyOfPolicy(object: unknown): string | undefined {
  const metadata = (object as PolicyLike | null | undefined)?.metadata;
  const sandbox = metadata?.labels?.[LABELS.sandbox];
  const namespace = metadata?.namespace;
  return typeof sandbox === 'string' && typeof namespace === 'string' ? keyOf(namespace, sandbox) : undefined;
}

export class NetworkPolicyEvents implements WatchSink {
  /** The sandboxes with a policy as last listed: a relist enqueues those whose policy went meanwhile. */
  #known = new Set<string>();

  constructor(private readonly enqueue: (sandboxKey: string) => void) {}

  replace(items: readonly unknown[]): void {
    const listed = new Set(items.flatMap((item) => sandboxKeyOfPolicy(item) ?? []));
    for (const key of this.#known) if (!listed.has(key)) this.enqueue(key);
    this.#known = listed;
  }

  apply(type: WatchEventType, object: unknown): void {
    const key = sandboxKeyOfPolicy(object);
    if (key === undefined) return;
    if (type === 'DELETED') this.#known.delete(key);
    else this.#known.add(key);
    this.enqueue(key);
  }
}
