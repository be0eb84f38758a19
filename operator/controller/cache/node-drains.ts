/**
 * The nodes being drained, from a watch of Nodes: cordoned (`spec.unschedulable`, what `kubectl drain` does
 * first) or tainted by the autoscaler that is removing them — cluster-autoscaler's
 * `ToBeDeletedByClusterAutoscaler`, Karpenter's `karpenter.sh/disrupted` (v1) and
 * `karpenter.sh/disruption=disrupting` (before v1); neither cordons. A sandbox pod on such a node is a drain
 * its eviction guard holds up: the sandbox says so (status.ts, `DisruptionBlocked`; issue 27).
 *
 * Only the drain is kept of each node (`decode`), never the node: a cluster's Node objects are large.
 */
import type { WatchEventType, WatchSink, WatchedResource } from '../../runtime/watcher.ts';

export const DRAIN_CAUSES = ['Cordoned', 'ClusterAutoscaler', 'Karpenter'] as const;
export type DrainCause = (typeof DRAIN_CAUSES)[number];

export type NodeDrain = { readonly node: string; readonly cause: DrainCause };
/** What the watch keeps of a node: its name, and its drain if it is being drained. */
type NodeSeen = { readonly node: string; readonly drain: NodeDrain | undefined };

type RawNode = {
  metadata?: { name?: unknown };
  spec?: { unschedulable?: unknown; taints?: { key?: unknown; value?: unknown }[] };
};

const AUTOSCALER_TAINTS: Readonly<Record<string, DrainCause>> = {
  ToBeDeletedByClusterAutoscaler: 'ClusterAutoscaler',
  'karpenter.sh/disrupted': 'Karpenter',
};

/** The drain a node is under, if any; an autoscaler's taint names the cause better than its cordon. */
export function nodeDrainOf(raw: unknown): NodeDrain | undefined {
  const node = raw as RawNode | null;
  const name = node?.metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  for (const taint of node?.spec?.taints ?? []) {
    const key = typeof taint.key === 'string' ? taint.key : '';
    const cause =
      AUTOSCALER_TAINTS[key] ??
      (key === 'karpenter.sh/disruption' && taint.value === 'disrupting' ? 'Karpenter' : undefined);
    if (cause !== undefined) return { node: name, cause };
  }
  return node?.spec?.unschedulable === true ? { node: name, cause: 'Cordoned' } : undefined;
}

export const nodeDrainResource: WatchedResource = {
  name: 'node-drains',
  apiVersion: 'v1',
  kind: 'Node',
  path: '/api/v1/nodes',
};

export class NodeDrains implements WatchSink<NodeSeen | undefined> {
  readonly #drains = new Map<string, NodeDrain>();

  /** `onChange` hears each node whose drain began or ended: its sandboxes' `DisruptionBlocked` may change. */
  constructor(private readonly onChange: (node: string) => void = () => undefined) {}

  drainOf(node: string): NodeDrain | undefined {
    return this.#drains.get(node);
  }

  decode(raw: unknown): NodeSeen | undefined {
    const name = (raw as RawNode | null)?.metadata?.name;
    return typeof name === 'string' && name !== '' ? { node: name, drain: nodeDrainOf(raw) } : undefined;
  }

  replace(items: readonly (NodeSeen | undefined)[]): void {
    const before = new Map(this.#drains);
    this.#drains.clear();
    for (const item of items) if (item?.drain) this.#drains.set(item.node, item.drain);
    for (const node of new Set([...before.keys(), ...this.#drains.keys()]))
      if (before.get(node)?.cause !== this.#drains.get(node)?.cause) this.onChange(node);
  }

  apply(type: WatchEventType, seen: NodeSeen | undefined): void {
    if (seen === undefined) return;
    const before = this.#drains.get(seen.node)?.cause;
    if (type === 'DELETED' || seen.drain === undefined) this.#drains.delete(seen.node);
    else this.#drains.set(seen.node, seen.drain);
    if (before !== this.#drains.get(seen.node)?.cause) this.onChange(seen.node);
  }
}
