/**
 * NetworkPolicyApi over the API server, as plain JSON: the sandbox's NetworkPolicy, its namespace's opt-out
 * label and the API server's endpoints the policy lets the shell reaper reach.
 */
import { NETWORK_UNMANAGED_ALLOWED, NETWORK_UNMANAGED_LABEL } from '../../api/network.ts';
import {
  networkPolicyName,
  ownedBy,
  policyHolds,
  type ApiServerEndpoint,
  type StoredNetworkPolicy,
} from '../../api/network-policy.ts';
import { request, requestUnlessGone } from '../../kube/errors.ts';
import { FIELD_MANAGER, type KubeClients } from '../../kube/clients.ts';
import { segment } from '../../kube/plain-json.ts';
import type { NetworkPolicyApi } from '../ports.ts';

/** The API server's endpoints change rarely (a control plane scaled or moved): read again after a minute. */
const ENDPOINTS_TTL_MS = 60_000;

type Versioned = StoredNetworkPolicy & {
  readonly metadata?: { readonly resourceVersion?: string; readonly uid?: string };
};
type EndpointSlice = {
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[];
  ports?: { port?: number; protocol?: string }[];
};

const policiesPath = (namespace: string) =>
  `/apis/networking.k8s.io/v1/namespaces/${segment(namespace)}/networkpolicies`;

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

export function kubeNetworkPolicyApi({ json }: KubeClients, now: () => number = Date.now): NetworkPolicyApi {
  let endpoints: { read: number; value: readonly ApiServerEndpoint[] } | undefined;
  return {
    async unmanagedAllowed(namespace) {
      const found = (await requestUnlessGone('Get', `namespace ${namespace}`, () =>
        json({ method: 'GET', path: `/api/v1/namespaces/${segment(namespace)}` }),
      )) as { metadata?: { labels?: Record<string, string> } } | undefined;
      return found?.metadata?.labels?.[NETWORK_UNMANAGED_LABEL] === NETWORK_UNMANAGED_ALLOWED;
    },
    async apiServerEndpoints() {
      if (endpoints !== undefined && now() - endpoints.read < ENDPOINTS_TTL_MS) return endpoints.value;
      // The API server keeps this one slice itself, under the Service's name: a GET of one named object is
      // all the operator's RBAC grants (charts/sandbox-operator/templates/rbac.yaml).
      const slice = (await requestUnlessGone('Get', 'endpointslice default/kubernetes', () =>
        json({
          method: 'GET',
          path: '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes',
        }),
      )) as EndpointSlice | undefined;
      const value = endpointsOf(slice === undefined ? [] : [slice]);
      // None found is read again on the next turn: the policy opens the API server as soon as it is known.
      endpoints = value.length === 0 ? undefined : { read: now(), value };
      return value;
    },
    async ensure(policy) {
      const { namespace, name } = policy.metadata;
      const target = `networkpolicy ${namespace}/${name}`;
      const query = { fieldManager: FIELD_MANAGER };
      const path = `${policiesPath(namespace)}/${segment(name)}`;
      const current = (await requestUnlessGone('Get', target, () => json({ method: 'GET', path }))) as
        Versioned | undefined;
      if (current === undefined) {
        // Created meanwhile (another turn, or someone else's under the name): the 409 fails this turn, which is
        // retried from fresh state and compares what is there; no pod is created on the strength of it.
        await request('Create', target, () =>
          json({ method: 'POST', path: policiesPath(namespace), query, body: policy }),
        );
        return 'Created';
      }
      if (policyHolds(current, policy)) return 'Unchanged';
      // Changed (or someone else's under the name): the desired form back, on the version read only.
      const resourceVersion = current.metadata?.resourceVersion ?? '';
      await request('Replace', target, () =>
        json({
          method: 'PUT',
          path,
          query,
          body: { ...policy, metadata: { ...policy.metadata, resourceVersion } },
        }),
      );
      return 'Repaired';
    },
    async removeOwned(sandbox) {
      const name = networkPolicyName(sandbox.name);
      const target = `networkpolicy ${sandbox.namespace}/${name}`;
      const path = `${policiesPath(sandbox.namespace)}/${segment(name)}`;
      const current = (await requestUnlessGone('Get', target, () => json({ method: 'GET', path }))) as
        Versioned | undefined;
      if (current === undefined) return 'Absent';
      if (!ownedBy(current, sandbox)) return 'NotOurs';
      const { uid, resourceVersion } = current.metadata ?? {};
      await requestUnlessGone('Delete', target, () =>
        json({ method: 'DELETE', path, body: { preconditions: { uid, resourceVersion } } }),
      );
      return 'Removed';
    },
  };
}
