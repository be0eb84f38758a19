/**
 * The cache of the operator's NetworkPolicies (its turns and what it keeps), the watch of the API server's
 * endpoints, and the namespaces that allow Unmanaged.
 */
import { describe, expect, it } from 'vitest';
import {
  decodePolicy,
  NetworkPolicyCache,
  networkPolicyResource,
  sandboxKeyOfPolicy,
} from '../../../operator/controller/cache/network-policies.ts';
import {
  ApiServerEndpoints,
  apiServerSliceResource,
  endpointsOf,
} from '../../../operator/controller/cache/api-server-endpoints.ts';
import { networkWatches } from '../../../operator/controller/cache/network-watches.ts';
import { LabelledNamespaces } from '../../../operator/controller/cache/labelled-namespaces.ts';
import { desiredNetworkPolicy, summaryHolds } from '../../../operator/api/network-policy.ts';

const policy = (namespace: string, sandbox: string, resourceVersion = '1') => ({
  metadata: {
    namespace,
    name: `${sandbox}-sandbox`,
    uid: `uid-${sandbox}`,
    resourceVersion,
    labels: { 'sandbox.agents.dev/sandbox': sandbox },
  },
});

/** A cache fed by its sink calls, as the watcher feeds it (each object decoded first). */
function fed(queued: string[] = []) {
  const cache = new NetworkPolicyCache((key) => queued.push(key));
  return {
    cache,
    queued,
    replace: (items: unknown[]) => cache.replace(items.map((item) => cache.decode(item))),
    apply: (type: 'ADDED' | 'MODIFIED' | 'DELETED', item: unknown) => cache.apply(type, cache.decode(item)),
  };
}

describe('the NetworkPolicy watch', () => {
  it('selects the operator’s policies, cluster-wide or in the one namespace watched', () => {
    expect(networkPolicyResource(undefined)).toMatchObject({
      path: '/apis/networking.k8s.io/v1/networkpolicies',
      labelSelector: 'sandbox.agents.dev/sandbox,app.kubernetes.io/managed-by=sandbox-operator',
    });
    expect(networkPolicyResource('team-a')).toMatchObject({
      path: '/apis/networking.k8s.io/v1/namespaces/team-a/networkpolicies',
      namespace: 'team-a',
    });
  });

  it('names the sandbox a policy isolates, and nothing for anything else', () => {
    expect(sandboxKeyOfPolicy(policy('a', 'box'))).toBe('a/box');
    expect(sandboxKeyOfPolicy({ metadata: { namespace: 'a' } })).toBeUndefined();
    expect(sandboxKeyOfPolicy(null)).toBeUndefined();
  });

  it('enqueues the sandbox of each change, a deletion above all', () => {
    const { apply, queued } = fed();
    apply('MODIFIED', policy('a', 'box'));
    apply('DELETED', policy('a', 'box'));
    apply('ADDED', { metadata: {} });
    expect(queued).toEqual(['a/box', 'a/box']);
  });

  it('enqueues, on a relist, the sandboxes whose policy went or changed while it was not watching', () => {
    const { apply, replace, queued } = fed();
    replace([policy('a', 'one'), policy('a', 'two'), policy('a', 'four')]);
    apply('ADDED', policy('a', 'three'));
    expect(queued).toEqual(['a/three']);
    queued.length = 0;
    replace([policy('a', 'two'), policy('a', 'four', '7'), policy('a', 'five')]);
    expect(queued.sort()).toEqual(['a/four', 'a/one', 'a/three']);
  });
});

describe('the NetworkPolicy cache', () => {
  const sandbox = { namespace: 'a', name: 'box', uid: 'uid-box' };
  const desired = desiredNetworkPolicy(sandbox, undefined, []);
  const stored = (resourceVersion: string, spec: unknown = desired.spec) => ({
    ...desired,
    metadata: { ...desired.metadata, uid: 'p-1', resourceVersion },
    spec,
  });

  it('keeps the version and uid a write is preconditioned on, and what the comparison needs', () => {
    const { cache, replace } = fed();
    replace([stored('5')]);
    const cached = cache.policy('a', 'box-sandbox');
    expect(cached).toMatchObject({ sandboxKey: 'a/box', uid: 'p-1', resourceVersion: '5' });
    expect(cached && summaryHolds(cached.summary, desired)).toBe(true);
    expect(cache.policy('a', 'other-sandbox')).toBeUndefined();
    expect(cache.policy('b', 'box-sandbox')).toBeUndefined();
  });

  it('keeps no spec, only its digest (the memory a cached policy costs)', () => {
    const { cache, replace } = fed();
    replace([stored('5')]);
    const kept = JSON.stringify(cache.policy('a', 'box-sandbox'));
    expect(kept).not.toContain('0.0.0.0/0');
    expect(kept.length).toBeLessThan(400);
  });

  it('sees a changed policy as changed, and a deleted one as gone', () => {
    const { cache, apply, replace } = fed();
    replace([stored('5')]);
    apply('MODIFIED', stored('6', { ...desired.spec, egress: [{}] }));
    const changed = cache.policy('a', 'box-sandbox');
    expect(changed?.resourceVersion).toBe('6');
    expect(changed && summaryHolds(changed.summary, desired)).toBe(false);
    apply('DELETED', stored('7'));
    expect(cache.policy('a', 'box-sandbox')).toBeUndefined();
  });

  it('notes the operator’s own write, whose event then brings no turn; another version does', () => {
    const { cache, apply, queued } = fed();
    cache.wrote(stored('8'));
    expect(cache.policy('a', 'box-sandbox')?.resourceVersion).toBe('8');
    apply('ADDED', stored('8'));
    expect(queued).toEqual([]);
    apply('MODIFIED', stored('9'));
    expect(queued).toEqual(['a/box']);
    cache.wrote({ metadata: {} });
    expect(cache.size).toBe(1);
  });

  it('names the sandboxes that have a policy', () => {
    const { cache, replace } = fed();
    replace([policy('a', 'one'), policy('b', 'two'), { metadata: {} }]);
    expect([...cache.sandboxKeys()].sort()).toEqual(['a/one', 'b/two']);
  });

  it('decodes only a labelled, named, versioned policy', () => {
    expect(decodePolicy(policy('a', 'box'))?.key).toBe('a/box-sandbox');
    expect(decodePolicy({ metadata: { ...policy('a', 'box').metadata, name: undefined } })).toBeUndefined();
    expect(
      decodePolicy({ metadata: { ...policy('a', 'box').metadata, resourceVersion: undefined } }),
    ).toBeUndefined();
    expect(decodePolicy({ metadata: { ...policy('a', 'box').metadata, uid: 3 } })?.policy.uid).toBe('');
  });

  it('is synced only while its watcher is', () => {
    const { cache } = fed();
    expect(cache.synced).toBe(false);
    const watcher = { isSynced: true };
    cache.watchedBy(watcher);
    expect(cache.synced).toBe(true);
    watcher.isSynced = false;
    expect(cache.synced).toBe(false);
  });
});

describe('the API server’s slice watch', () => {
  const slice = (...addresses: string[]) => ({
    metadata: { namespace: 'default', name: 'kubernetes' },
    addressType: 'IPv4',
    endpoints: addresses.map((address) => ({ addresses: [address] })),
    ports: [{ port: 6443 }],
  });
  const fedSlice = () => {
    let changes = 0;
    const view = new ApiServerEndpoints(() => (changes += 1));
    return {
      view,
      changes: () => changes,
      replace: (items: unknown[]) => view.replace(items.map((item) => view.decode(item))),
      apply: (type: 'ADDED' | 'MODIFIED' | 'DELETED', item: unknown) => view.apply(type, view.decode(item)),
    };
  };

  it('selects the one slice by name, in default', () => {
    expect(apiServerSliceResource).toMatchObject({
      path: '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
      namespace: 'default',
      fieldSelector: 'metadata.name=kubernetes',
    });
  });

  it('keeps its endpoints; none without a slice', () => {
    const { view, replace, apply } = fedSlice();
    expect(view.endpoints).toEqual([]);
    replace([slice('10.0.0.1')]);
    expect(view.endpoints).toEqual([{ address: '10.0.0.1', port: 6443 }]);
    apply('DELETED', slice('10.0.0.1'));
    expect(view.endpoints).toEqual([]);
  });

  it('says a change, order aside, but not the first list nor the same endpoints again', () => {
    const { replace, apply, changes } = fedSlice();
    replace([]);
    expect(changes()).toBe(0);
    apply('ADDED', slice('10.0.0.1', '10.0.0.2'));
    expect(changes()).toBe(1);
    apply('MODIFIED', slice('10.0.0.2', '10.0.0.1'));
    replace([slice('10.0.0.1', '10.0.0.2')]);
    expect(changes()).toBe(1);
    apply('MODIFIED', slice('10.0.0.1'));
    apply('DELETED', slice('10.0.0.1'));
    expect(changes()).toBe(3);
  });

  it('is synced only while its watcher is', () => {
    const { view } = fedSlice();
    expect(view.synced).toBe(false);
    view.watchedBy({ isSynced: true });
    expect(view.synced).toBe(true);
  });

  it('makes every sandbox with a policy look again when the endpoints change', () => {
    const queued: string[] = [];
    const network = networkWatches(
      undefined,
      (key) => queued.push(key),
      () => [],
    );
    network.policies.replace([policy('a', 'one'), policy('b', 'two')].map((p) => decodePolicy(p)));
    network.endpoints.replace([]);
    network.endpoints.apply('ADDED', network.endpoints.decode(slice('10.0.0.1')));
    expect(queued.sort()).toEqual(['a/one', 'b/two']);
  });
});

describe('the namespaces that allow Unmanaged', () => {
  const ns = (name: string) => ({ metadata: { name } });

  it('are watched by the label’s value, cluster-wide or the one namespace watched', () => {
    const [namespaces] = networkWatches(
      'team-a',
      () => undefined,
      () => [],
    ).labelSinks.map(([r]) => r);
    expect(namespaces).toMatchObject({
      path: '/api/v1/namespaces',
      labelSelector: 'sandbox.agents.dev/network-unmanaged=allowed',
      fieldSelector: 'metadata.name=team-a',
    });
    const [everywhere] = networkWatches(
      undefined,
      () => undefined,
      () => [],
    ).labelSinks.map(([r]) => r);
    expect(everywhere).not.toHaveProperty('fieldSelector');
  });

  it('enqueue every sandbox of a namespace labelled or unlabelled, and only those', () => {
    const queued: string[] = [];
    const [[, sink] = []] = networkWatches(
      undefined,
      (key) => queued.push(key),
      () => ['a/one', 'a/two', 'ab/x'],
    ).labelSinks;
    sink?.apply('ADDED', ns('a'));
    expect(queued).toEqual(['a/one', 'a/two']);
  });

  it('say a namespace only when it gains or loses the label, a relist included', () => {
    const changed: string[] = [];
    const sink = new LabelledNamespaces((name) => changed.push(name));
    sink.replace([ns('a'), ns('b')]);
    sink.apply('MODIFIED', ns('a'));
    sink.apply('ADDED', { metadata: {} });
    expect(changed).toEqual(['a', 'b']);
    sink.apply('DELETED', ns('a'));
    sink.replace([ns('c'), ns('b')]);
    expect(changed).toEqual(['a', 'b', 'a', 'c']);
  });
});

describe('the API server’s endpoints', () => {
  it('are every ready address on every TCP port of the kubernetes EndpointSlice', () => {
    expect(
      endpointsOf([
        {
          addressType: 'IPv4',
          endpoints: [
            { addresses: ['10.0.0.1'], conditions: { ready: true } },
            { addresses: ['10.0.0.2'] },
            { addresses: ['10.0.0.3'], conditions: { ready: false } },
          ],
          ports: [{ port: 6443, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }, { port: 8443 }, {}],
        },
        { addressType: 'FQDN', endpoints: [{ addresses: ['api.example'] }], ports: [{ port: 443 }] },
      ]),
    ).toEqual([
      { address: '10.0.0.1', port: 6443 },
      { address: '10.0.0.1', port: 8443 },
      { address: '10.0.0.2', port: 6443 },
      { address: '10.0.0.2', port: 8443 },
    ]);
  });

  it('include IPv6 slices, and are none without a slice', () => {
    expect(
      endpointsOf([{ addressType: 'IPv6', endpoints: [{ addresses: ['fd00::1'] }], ports: [{ port: 443 }] }]),
    ).toEqual([{ address: 'fd00::1', port: 443 }]);
    expect(endpointsOf([])).toEqual([]);
  });
});
