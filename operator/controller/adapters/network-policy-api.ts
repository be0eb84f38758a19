/**
 * NetworkPolicyApi over the API server, as plain JSON: the sandbox's NetworkPolicy, its namespace's opt-out
 * label and the API server's endpoints the policy lets the shell reaper reach. Once their watches have listed,
 * the policy and the endpoints are read from the caches (cache/network-watches.ts), and a policy that stands
 * costs no request; a write the cache was stale for (409, 404) reads the policy live and decides again.
 */
import { NETWORK_UNMANAGED_ALLOWED, NETWORK_UNMANAGED_LABEL } from '../../api/network.ts';
import {
  networkPolicyName,
  ownedBy,
  policyHolds,
  summaryHolds,
  summaryOwnedBy,
  type ApiServerEndpoint,
  type DesiredNetworkPolicy,
  type StoredNetworkPolicy,
} from '../../api/network-policy.ts';
import { KubeRequestError, request, requestUnlessGone } from '../../kube/errors.ts';
import {
  API_SERVER_SLICE,
  endpointsOf,
  type ApiServerEndpointsView,
  type EndpointSlice,
} from '../cache/api-server-endpoints.ts';
import type { NetworkPolicyView } from '../cache/network-policies.ts';
import { FIELD_MANAGER, type KubeClients } from '../../kube/clients.ts';
import { segment } from '../../kube/plain-json.ts';
import type { NetworkPolicyApi } from '../ports.ts';

/** The API server's endpoints change rarely (a control plane scaled or moved): read again after a minute. */
const ENDPOINTS_TTL_MS = 60_000;

type Versioned = StoredNetworkPolicy & {
  readonly metadata?: { readonly resourceVersion?: string; readonly uid?: string };
};

/** The watch-fed caches the adapter reads once they are synced; without them (tests) it reads live. */
export type NetworkCaches = {
  readonly policies: NetworkPolicyView;
  readonly endpoints: ApiServerEndpointsView;
};

const policiesPath = (namespace: string) =>
  `/apis/networking.k8s.io/v1/namespaces/${segment(namespace)}/networkpolicies`;

/** A write the cache's stale view made: created meanwhile (409), changed since (409) or gone (404). */
const staleWrite = (error: unknown) =>
  error instanceof KubeRequestError && (error.conflict || error.notFound);

export function kubeNetworkPolicyApi(
  { json }: KubeClients,
  caches?: NetworkCaches,
  now: () => number = Date.now,
): NetworkPolicyApi {
  let endpoints: { read: number; value: readonly ApiServerEndpoint[] } | undefined;
  const query = { fieldManager: FIELD_MANAGER };
  const noted = (answer: unknown) => caches?.policies.wrote(answer);

  const create = async (policy: DesiredNetworkPolicy, target: string) => {
    noted(
      await request('Create', target, () =>
        json({ method: 'POST', path: policiesPath(policy.metadata.namespace), query, body: policy }),
      ),
    );
    return 'Created' as const;
  };
  // The desired form back, on the version read only.
  const replace = async (policy: DesiredNetworkPolicy, target: string, resourceVersion: string) => {
    const { namespace, name } = policy.metadata;
    noted(
      await request('Replace', target, () =>
        json({
          method: 'PUT',
          path: `${policiesPath(namespace)}/${segment(name)}`,
          query,
          body: { ...policy, metadata: { ...policy.metadata, resourceVersion } },
        }),
      ),
    );
    return 'Repaired' as const;
  };
  const readLive = async (namespace: string, name: string, target: string) =>
    (await requestUnlessGone('Get', target, () =>
      json({ method: 'GET', path: `${policiesPath(namespace)}/${segment(name)}` }),
    )) as Versioned | undefined;

  /** Today's way, and the way back from a stale cache: read the policy live, then decide. */
  const ensureLive = async (policy: DesiredNetworkPolicy, target: string) => {
    const { namespace, name } = policy.metadata;
    const current = await readLive(namespace, name, target);
    // Created meanwhile (another turn, or someone else's under the name): the 409 fails this turn, which is
    // retried from fresh state and compares what is there; no pod is created on the strength of it.
    if (current === undefined) return create(policy, target);
    if (policyHolds(current, policy)) return 'Unchanged' as const;
    // Changed (or someone else's under the name).
    return replace(policy, target, current.metadata?.resourceVersion ?? '');
  };

  return {
    async unmanagedAllowed(namespace) {
      const found = (await requestUnlessGone('Get', `namespace ${namespace}`, () =>
        json({ method: 'GET', path: `/api/v1/namespaces/${segment(namespace)}` }),
      )) as { metadata?: { labels?: Record<string, string> } } | undefined;
      return found?.metadata?.labels?.[NETWORK_UNMANAGED_LABEL] === NETWORK_UNMANAGED_ALLOWED;
    },
    async apiServerEndpoints() {
      if (caches?.endpoints.synced === true) return caches.endpoints.endpoints;
      if (endpoints !== undefined && now() - endpoints.read < ENDPOINTS_TTL_MS) return endpoints.value;
      // The API server keeps this one slice itself, under the Service's name: a GET of one named object (or a
      // watch selecting it by name) is all the operator's RBAC grants (charts/sandbox-operator/templates/rbac.yaml).
      const { namespace, name } = API_SERVER_SLICE;
      const slice = (await requestUnlessGone('Get', `endpointslice ${namespace}/${name}`, () =>
        json({
          method: 'GET',
          path: `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices/${name}`,
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
      if (caches?.policies.synced !== true) return ensureLive(policy, target);
      const cached = caches.policies.policy(namespace, name);
      if (cached !== undefined && summaryHolds(cached.summary, policy)) return 'Unchanged';
      try {
        return cached === undefined
          ? await create(policy, target)
          : await replace(policy, target, cached.resourceVersion);
      } catch (error) {
        // The cache was behind the API server: what is there now decides.
        if (!staleWrite(error)) throw error;
        return ensureLive(policy, target);
      }
    },
    async removeOwned(sandbox) {
      const name = networkPolicyName(sandbox.name);
      const target = `networkpolicy ${sandbox.namespace}/${name}`;
      const path = `${policiesPath(sandbox.namespace)}/${segment(name)}`;
      const remove = async (uid: string | undefined, resourceVersion: string | undefined) => {
        await requestUnlessGone('Delete', target, () =>
          json({ method: 'DELETE', path, body: { preconditions: { uid, resourceVersion } } }),
        );
        return 'Removed' as const;
      };
      if (caches?.policies.synced === true) {
        const cached = caches.policies.policy(sandbox.namespace, name);
        if (cached === undefined) return 'Absent';
        if (!summaryOwnedBy(cached.summary, sandbox)) return 'NotOurs';
        try {
          return await remove(cached.uid, cached.resourceVersion);
        } catch (error) {
          // Changed since the cache saw it (409): what is there now decides.
          if (!staleWrite(error)) throw error;
        }
      }
      const current = await readLive(sandbox.namespace, name, target);
      if (current === undefined) return 'Absent';
      if (!ownedBy(current, sandbox)) return 'NotOurs';
      return remove(current.metadata?.uid, current.metadata?.resourceVersion);
    },
    mayStand(sandbox) {
      if (caches?.policies.synced !== true) return true;
      return caches.policies.policy(sandbox.namespace, networkPolicyName(sandbox.name)) !== undefined;
    },
  };
}
