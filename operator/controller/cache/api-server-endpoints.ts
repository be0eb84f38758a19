/**
 * The API server's endpoints, from a watch of the one EndpointSlice the API server keeps for its `kubernetes`
 * Service (default/kubernetes, selected by name: the operator's RBAC names that one object). The policies
 * open these addresses to the shell reaper (api/network-policy.ts); when they change, every sandbox with a
 * policy has its turn, which rewrites it. Until the watch has listed (and again while it is down), `synced`
 * is false and the adapter reads the slice live (fail closed).
 */
import type { ApiServerEndpoint } from '../../api/network-policy.ts';
import type { WatchEventType, WatchSink, WatchedResource } from '../../runtime/watcher.ts';

export type EndpointSlice = {
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[];
  ports?: { port?: number; protocol?: string }[];
};

export const API_SERVER_SLICE = { namespace: 'default', name: 'kubernetes' } as const;

export const apiServerSliceResource: WatchedResource = {
  name: 'endpointslices',
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  path: `/apis/discovery.k8s.io/v1/namespaces/${API_SERVER_SLICE.namespace}/endpointslices`,
  namespace: API_SERVER_SLICE.namespace,
  fieldSelector: `metadata.name=${API_SERVER_SLICE.name}`,
};

/** Every ready address × TCP port of the `kubernetes` Service's slices (IPv4 and IPv6 alike). */
export function endpointsOf(slices: readonly EndpointSlice[]): ApiServerEndpoint[] {
  return slices.flatMap((slice) => {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') return [];
    const ports = (slice.ports ?? []).flatMap((p) =>
      p.port !== undefined && (p.protocol ?? 'TCP') === 'TCP' ? [p.port] : [],
    );
    return (slice.endpoints ?? [])
      .filter((e) => e.conditions?.ready !== false)
      .flatMap((e) => (e.addresses ?? []).flatMap((address) => ports.map((port) => ({ address, port }))));
  });
}

/** The endpoints a change is judged by: order aside, as the policy's rules sort them. */
const sameEndpoints = (a: readonly ApiServerEndpoint[], b: readonly ApiServerEndpoint[]) => {
  const text = (list: readonly ApiServerEndpoint[]) =>
    list
      .map(({ address, port }) => `${address}:${port}`)
      .sort()
      .join(',');
  return text(a) === text(b);
};

/** What the adapter reads: the endpoints, once the watch has listed. */
export interface ApiServerEndpointsView {
  readonly synced: boolean;
  readonly endpoints: readonly ApiServerEndpoint[];
}

export class ApiServerEndpoints implements WatchSink<readonly ApiServerEndpoint[]>, ApiServerEndpointsView {
  /** Undefined until the first list: no change to report before something was known. */
  #endpoints: readonly ApiServerEndpoint[] | undefined;
  #synced: () => boolean = () => false;

  /** `changed` runs when the endpoints differ from those known before (not on the first list). */
  constructor(private readonly changed: () => void) {}

  watchedBy(watcher: { readonly isSynced: boolean }): void {
    this.#synced = () => watcher.isSynced;
  }

  get synced(): boolean {
    return this.#synced();
  }

  get endpoints(): readonly ApiServerEndpoint[] {
    return this.#endpoints ?? [];
  }

  decode(raw: unknown): readonly ApiServerEndpoint[] {
    return endpointsOf([raw as EndpointSlice]);
  }

  replace(items: readonly (readonly ApiServerEndpoint[])[]): void {
    this.#set(items.flat());
  }

  apply(type: WatchEventType, endpoints: readonly ApiServerEndpoint[]): void {
    this.#set(type === 'DELETED' ? [] : endpoints);
  }

  #set(endpoints: readonly ApiServerEndpoint[]): void {
    const before = this.#endpoints;
    this.#endpoints = endpoints;
    if (before !== undefined && !sameEndpoints(before, endpoints)) this.changed();
  }
}
