/**
 * The cache of the operator's own NetworkPolicies (labelled with the sandbox they isolate), fed by their watch:
 * what the turn compares (network-isolation.ts, through adapters/network-policy-api.ts), so a turn whose
 * policy stands reads nothing. It keeps a policy's summary only (api/network-policy.ts `PolicySummary`: a
 * digest of its spec, not the spec; docs/adr/0009), with the uid and version a write is preconditioned on.
 *
 * Any change made by someone else, its deletion above all, brings the sandbox's turn, which puts the policy
 * back at once. The operator's own writes are noted as their answers come (`wrote`): their events then change
 * nothing and bring no turn. Until the watch has listed (and again while it is down), `synced` is false and
 * the adapter reads live (fail closed).
 */
import { LABELS, MANAGED_BY } from '../../api/names.ts';
import { summarizePolicy, type PolicySummary, type StoredNetworkPolicy } from '../../api/network-policy.ts';
import type { WatchEventType, WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import { keyOf } from './store-records.ts';

type PolicyLike = {
  metadata?: {
    namespace?: unknown;
    name?: unknown;
    uid?: unknown;
    resourceVersion?: unknown;
    labels?: Record<string, unknown>;
  };
};

/** What the cache keeps of one policy. */
export type CachedPolicy = {
  readonly sandboxKey: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly summary: PolicySummary;
};

type Decoded = { readonly key: string; readonly policy: CachedPolicy };

/** What the adapter reads: the policy under a name, once the watch has listed. */
export interface NetworkPolicyView {
  readonly synced: boolean;
  policy(namespace: string, name: string): CachedPolicy | undefined;
  /** A policy as the API server answered the operator's own create or replace. */
  wrote(answer: unknown): void;
}

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

/** A policy as the cache keeps it; undefined for an object without its sandbox label, name or version. */
export function decodePolicy(object: unknown): Decoded | undefined {
  const sandboxKey = sandboxKeyOfPolicy(object);
  const metadata = (object as PolicyLike | null | undefined)?.metadata;
  const { namespace, name, uid, resourceVersion } = metadata ?? {};
  if (sandboxKey === undefined || typeof name !== 'string' || typeof resourceVersion !== 'string')
    return undefined;
  return {
    key: keyOf(namespace as string, name),
    policy: {
      sandboxKey,
      uid: typeof uid === 'string' ? uid : '',
      resourceVersion,
      summary: summarizePolicy(object as StoredNetworkPolicy),
    },
  };
}

export class NetworkPolicyCache implements WatchSink<Decoded | undefined>, NetworkPolicyView {
  #policies = new Map<string, CachedPolicy>();
  #synced: () => boolean = () => false;

  constructor(private readonly enqueue: (sandboxKey: string) => void) {}

  /** Whether the watch that fills this cache lists and watches now (runtime/watcher.ts `isSynced`). */
  watchedBy(watcher: { readonly isSynced: boolean }): void {
    this.#synced = () => watcher.isSynced;
  }

  get synced(): boolean {
    return this.#synced();
  }

  policy(namespace: string, name: string): CachedPolicy | undefined {
    return this.#policies.get(keyOf(namespace, name));
  }

  /** The sandboxes that have a policy: those a change of the API server's endpoints must look at again. */
  sandboxKeys(): Set<string> {
    return new Set([...this.#policies.values()].map((policy) => policy.sandboxKey));
  }

  get size(): number {
    return this.#policies.size;
  }

  wrote(answer: unknown): void {
    const decoded = decodePolicy(answer);
    if (decoded !== undefined) this.#policies.set(decoded.key, decoded.policy);
  }

  decode(raw: unknown): Decoded | undefined {
    return decodePolicy(raw);
  }

  /** A relist: the sandboxes whose policy went or changed while the watch was down have their turn. */
  replace(items: readonly (Decoded | undefined)[]): void {
    const listed = new Map<string, CachedPolicy>();
    for (const item of items) if (item !== undefined) listed.set(item.key, item.policy);
    const touched = new Set<string>();
    for (const [key, before] of this.#policies)
      if (listed.get(key)?.resourceVersion !== before.resourceVersion) touched.add(before.sandboxKey);
    this.#policies = listed;
    for (const key of touched) this.enqueue(key);
  }

  apply(type: WatchEventType, item: Decoded | undefined): void {
    if (item === undefined) return;
    const before = this.#policies.get(item.key);
    if (type === 'DELETED') {
      this.#policies.delete(item.key);
      this.enqueue(item.policy.sandboxKey);
      return;
    }
    this.#policies.set(item.key, item.policy);
    // The operator's own write, noted from its answer: the turn that made it already acted on it.
    if (before?.resourceVersion === item.policy.resourceVersion) return;
    this.enqueue(item.policy.sandboxKey);
  }
}
