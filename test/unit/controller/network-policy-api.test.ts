/**
 * The NetworkPolicy adapter over a scripted API server: once its caches are synced a policy that stands
 * costs no request, a missing or changed one one write; a write the cache was stale for reads live and
 * decides again; before the caches are synced every turn reads live, as before they existed.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { desiredNetworkPolicy, type ApiServerEndpoint } from '../../../operator/api/network-policy.ts';
import { kubeNetworkPolicyApi } from '../../../operator/controller/adapters/network-policy-api.ts';
import { NetworkPolicyCache } from '../../../operator/controller/cache/network-policies.ts';
import type { JsonRequest } from '../../../operator/kube/plain-json.ts';

const sandbox = { namespace: 'a', name: 'box', uid: 'uid-box' };
const desired = desiredNetworkPolicy(sandbox, undefined, []);
const POLICY = '/apis/networking.k8s.io/v1/namespaces/a/networkpolicies/box-sandbox';
const POLICIES = '/apis/networking.k8s.io/v1/namespaces/a/networkpolicies';
const SLICE = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes';

const stored = (resourceVersion: string, spec: unknown = desired.spec) => ({
  ...desired,
  metadata: { ...desired.metadata, uid: 'p-1', resourceVersion },
  spec,
});
const changed = (resourceVersion: string) => stored(resourceVersion, { ...desired.spec, egress: [{}] });
const httpError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

type Answer = unknown;

/** A scripted API server: each request answered (or thrown) in turn; `sent` says what was asked. */
function server(answers: Answer[]) {
  const sent: string[] = [];
  const json = (request: JsonRequest) => {
    const body = request.body as
      | {
          metadata?: { resourceVersion?: string };
          preconditions?: { uid?: string; resourceVersion?: string };
        }
      | undefined;
    const version = body?.metadata?.resourceVersion;
    const precondition = body?.preconditions;
    const bound = precondition === undefined ? '' : ` if ${precondition.uid}@${precondition.resourceVersion}`;
    sent.push(`${request.method} ${request.path}${version === undefined ? '' : ` @${version}`}${bound}`);
    const answer = answers.shift();
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  };
  return { clients: { config: new KubeConfig(), json }, sent };
}

function caches(synced = true, endpoints: readonly ApiServerEndpoint[] = []) {
  const policies = new NetworkPolicyCache(() => undefined);
  policies.watchedBy({ isSynced: synced });
  return { policies, endpoints: { synced, endpoints } };
}

describe('the NetworkPolicy adapter, its caches synced', () => {
  it('sends nothing for a policy that stands, nor for the endpoints', async () => {
    const { clients, sent } = server([]);
    const cached = caches(true, [{ address: '10.0.0.1', port: 6443 }]);
    cached.policies.wrote(stored('5'));
    const api = kubeNetworkPolicyApi(clients, cached);
    expect(await api.ensure(desired)).toBe('Unchanged');
    expect(await api.apiServerEndpoints()).toEqual([{ address: '10.0.0.1', port: 6443 }]);
    expect(sent).toEqual([]);
  });

  it('creates a missing policy without reading it, and notes the answer', async () => {
    const { clients, sent } = server([stored('6')]);
    const cached = caches();
    const api = kubeNetworkPolicyApi(clients, cached);
    expect(await api.ensure(desired)).toBe('Created');
    expect(sent).toEqual([`POST ${POLICIES}`]);
    expect(cached.policies.policy('a', 'box-sandbox')?.resourceVersion).toBe('6');
    expect(await api.ensure(desired)).toBe('Unchanged');
    expect(sent).toHaveLength(1);
  });

  it('puts a changed policy back on the cached version', async () => {
    const { clients, sent } = server([stored('8')]);
    const cached = caches();
    cached.policies.wrote(changed('7'));
    expect(await kubeNetworkPolicyApi(clients, cached).ensure(desired)).toBe('Repaired');
    expect(sent).toEqual([`PUT ${POLICY} @7`]);
    expect(cached.policies.policy('a', 'box-sandbox')?.resourceVersion).toBe('8');
  });

  it('on a create answered AlreadyExists, reads live and decides: there it stands', async () => {
    const { clients, sent } = server([httpError(409), stored('9')]);
    expect(await kubeNetworkPolicyApi(clients, caches()).ensure(desired)).toBe('Unchanged');
    expect(sent).toEqual([`POST ${POLICIES}`, `GET ${POLICY}`]);
  });

  it('on a replace of a stale version (409), reads live and replaces on the version read', async () => {
    const { clients, sent } = server([httpError(409), changed('11'), stored('12')]);
    const cached = caches();
    cached.policies.wrote(changed('10'));
    expect(await kubeNetworkPolicyApi(clients, cached).ensure(desired)).toBe('Repaired');
    expect(sent).toEqual([`PUT ${POLICY} @10`, `GET ${POLICY}`, `PUT ${POLICY} @11`]);
  });

  it('on a replace of a policy deleted meanwhile (404), reads live and creates it', async () => {
    const { clients, sent } = server([httpError(404), httpError(404), stored('13')]);
    const cached = caches();
    cached.policies.wrote(changed('10'));
    expect(await kubeNetworkPolicyApi(clients, cached).ensure(desired)).toBe('Created');
    expect(sent).toEqual([`PUT ${POLICY} @10`, `GET ${POLICY}`, `POST ${POLICIES}`]);
  });

  it('lets any other refusal through (a misconfiguration is the turn’s to say)', async () => {
    const { clients } = server([httpError(403)]);
    await expect(kubeNetworkPolicyApi(clients, caches()).ensure(desired)).rejects.toMatchObject({
      status: 403,
      step: 'Create',
    });
  });
});

describe('the NetworkPolicy’s removal (a released sandbox, or an Unmanaged one)', () => {
  const foreign = (resourceVersion: string) => ({
    ...stored(resourceVersion),
    metadata: { ...stored(resourceVersion).metadata, labels: { 'sandbox.agents.dev/sandbox': 'box' } },
  });

  it('deletes the cached policy on the uid and version cached, reading nothing', async () => {
    const { clients, sent } = server([{}]);
    const cached = caches();
    cached.policies.wrote(stored('5'));
    const api = kubeNetworkPolicyApi(clients, cached);
    expect(api.mayStand(sandbox)).toBe(true);
    expect(await api.removeOwned(sandbox)).toBe('Removed');
    expect(sent).toEqual([`DELETE ${POLICY} if p-1@5`]);
  });

  it('sends nothing when the synced cache holds no policy, and says none may stand', async () => {
    const { clients, sent } = server([]);
    const api = kubeNetworkPolicyApi(clients, caches());
    expect(api.mayStand(sandbox)).toBe(false);
    expect(await api.removeOwned(sandbox)).toBe('Absent');
    expect(sent).toEqual([]);
  });

  it('on a stale version (409), reads live and deletes on what it read', async () => {
    const { clients, sent } = server([httpError(409), stored('6'), {}]);
    const cached = caches();
    cached.policies.wrote(stored('5'));
    expect(await kubeNetworkPolicyApi(clients, cached).removeOwned(sandbox)).toBe('Removed');
    expect(sent).toEqual([`DELETE ${POLICY} if p-1@5`, `GET ${POLICY}`, `DELETE ${POLICY} if p-1@6`]);
  });

  it('leaves a policy under the name that is not the operator’s, cached or read live', async () => {
    const cached = caches();
    cached.policies.wrote(foreign('5'));
    const synced = server([]);
    expect(await kubeNetworkPolicyApi(synced.clients, cached).removeOwned(sandbox)).toBe('NotOurs');
    expect(synced.sent).toEqual([]);
    const live = server([foreign('5')]);
    expect(await kubeNetworkPolicyApi(live.clients, caches(false)).removeOwned(sandbox)).toBe('NotOurs');
    expect(live.sent).toEqual([`GET ${POLICY}`]);
  });

  it('before the cache has listed: a policy may stand, and it is read live before its delete', async () => {
    const { clients, sent } = server([stored('7'), {}, httpError(404)]);
    const api = kubeNetworkPolicyApi(clients, caches(false));
    expect(api.mayStand(sandbox)).toBe(true);
    expect(await api.removeOwned(sandbox)).toBe('Removed');
    expect(await api.removeOwned(sandbox)).toBe('Absent');
    expect(sent).toEqual([`GET ${POLICY}`, `DELETE ${POLICY} if p-1@7`, `GET ${POLICY}`]);
  });

  it('lets any other refusal of the delete through', async () => {
    const { clients } = server([httpError(403)]);
    const cached = caches();
    cached.policies.wrote(stored('5'));
    await expect(kubeNetworkPolicyApi(clients, cached).removeOwned(sandbox)).rejects.toMatchObject({
      status: 403,
    });
  });
});

describe('the NetworkPolicy adapter before its caches are synced', () => {
  it('reads the policy and the slice live on every turn, the cache aside (fail closed)', async () => {
    const slice = { addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.2'] }], ports: [{ port: 443 }] };
    const { clients, sent } = server([stored('5'), slice, stored('5')]);
    const cached = caches(false, [{ address: '10.9.9.9', port: 1 }]);
    cached.policies.wrote(changed('4'));
    const api = kubeNetworkPolicyApi(clients, cached);
    expect(await api.ensure(desired)).toBe('Unchanged');
    expect(await api.apiServerEndpoints()).toEqual([{ address: '10.0.0.2', port: 443 }]);
    expect(await api.ensure(desired)).toBe('Unchanged');
    expect(sent).toEqual([`GET ${POLICY}`, `GET ${SLICE}`, `GET ${POLICY}`]);
  });

  it('reads a missing slice again on the next turn', async () => {
    const { clients, sent } = server([httpError(404), httpError(404)]);
    const api = kubeNetworkPolicyApi(clients, caches(false));
    expect(await api.apiServerEndpoints()).toEqual([]);
    expect(await api.apiServerEndpoints()).toEqual([]);
    expect(sent).toEqual([`GET ${SLICE}`, `GET ${SLICE}`]);
  });
});
