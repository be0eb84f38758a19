/** The watch of the operator's NetworkPolicies brings their sandboxes' turns; the API server's endpoints. */
import { describe, expect, it } from 'vitest';
import {
  NetworkPolicyEvents,
  networkPolicyResource,
  sandboxKeyOfPolicy,
} from '../../../operator/controller/cache/network-policy-events.ts';
import { endpointsOf } from '../../../operator/controller/adapters/network-policy-api.ts';
import { networkWatches } from '../../../operator/controller/cache/network-watches.ts';
import { LabelledNamespaces } from '../../../operator/controller/cache/labelled-namespaces.ts';

const policy = (namespace: string, sandbox: string) => ({
  metadata: { namespace, name: `${sandbox}-sandbox`, labels: { 'sandbox.agents.dev/sandbox': sandbox } },
});

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
    const queued: string[] = [];
    const sink = new NetworkPolicyEvents((key) => queued.push(key));
    sink.apply('MODIFIED', policy('a', 'box'));
    sink.apply('DELETED', policy('a', 'box'));
    sink.apply('ADDED', { metadata: {} });
    expect(queued).toEqual(['a/box', 'a/box']);
  });

  it('enqueues, on a relist, the sandboxes whose policy went while it was not watching', () => {
    const queued: string[] = [];
    const sink = new NetworkPolicyEvents((key) => queued.push(key));
    sink.replace([policy('a', 'one'), policy('a', 'two')]);
    sink.apply('ADDED', policy('a', 'three'));
    expect(queued).toEqual(['a/three']);
    queued.length = 0;
    sink.replace([policy('a', 'two')]);
    expect(queued.sort()).toEqual(['a/one', 'a/three']);
  });
});

describe('the namespaces that allow Unmanaged', () => {
  const ns = (name: string) => ({ metadata: { name } });

  it('are watched by the label’s value, cluster-wide or the one namespace watched', () => {
    const [policies, namespaces] = networkWatches(
      'team-a',
      () => undefined,
      () => [],
    ).map(([r]) => r);
    expect(policies?.name).toBe('networkpolicies');
    expect(namespaces).toMatchObject({
      path: '/api/v1/namespaces',
      labelSelector: 'sandbox.agents.dev/network-unmanaged=allowed',
      fieldSelector: 'metadata.name=team-a',
    });
    const [, everywhere] = networkWatches(
      undefined,
      () => undefined,
      () => [],
    ).map(([r]) => r);
    expect(everywhere).not.toHaveProperty('fieldSelector');
  });

  it('enqueue every sandbox of a namespace labelled or unlabelled, and only those', () => {
    const queued: string[] = [];
    const [, [, sink] = []] = networkWatches(
      undefined,
      (key) => queued.push(key),
      () => ['a/one', 'a/two', 'ab/x'],
    );
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
