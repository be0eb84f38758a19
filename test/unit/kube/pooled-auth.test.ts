import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { pooledAuthentication, tlsIdentity } from '../../../operator/kube/pooled-auth.ts';

function kubeconfig(ca: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', caData: Buffer.from(ca).toString('base64') }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const context = () => new RequestContext('https://127.0.0.1:6443/api/v1/pods', HttpMethod.GET);

describe('pooledAuthentication', () => {
  it('gives every request with the same TLS material the same connection pool, and still sets its headers', async () => {
    const auth = pooledAuthentication(kubeconfig('ca-one', 'secret'));
    const [first, second] = [context(), context()];
    await auth.applySecurityAuthentication(first);
    await auth.applySecurityAuthentication(second);
    expect(first.getDispatcher()).toBeDefined();
    expect(second.getDispatcher()).toBe(first.getDispatcher());
    expect(second.getHeaders()['Authorization']).toBe('Bearer secret');
  });

  it('reads the credentials again for each pooled request: a rotated token is sent at once', async () => {
    const kc = kubeconfig('ca-one', 'before');
    const auth = pooledAuthentication(kc);
    const [first, second] = [context(), context()];
    await auth.applySecurityAuthentication(first);
    Object.assign(kc.getCurrentUser() ?? {}, { token: 'rotated' });
    await auth.applySecurityAuthentication(second);
    expect(second.getDispatcher()).toBe(first.getDispatcher());
    expect(first.getHeaders()['Authorization']).toBe('Bearer before');
    expect(second.getHeaders()['Authorization']).toBe('Bearer rotated');
  });

  it('the KubeConfig alone builds a new pool (a new TLS connection) for each request', async () => {
    // What the pool fixes: client-node 2.0.1 does not cache its undici Agent.
    const kc = kubeconfig('ca-one', 'secret');
    const [first, second] = [context(), context()];
    await kc.applySecurityAuthentication(first);
    await kc.applySecurityAuthentication(second);
    expect(second.getDispatcher()).not.toBe(first.getDispatcher());
  });

  it('keys pools by the TLS material: another CA or client certificate is another pool', () => {
    expect(tlsIdentity({ ca: Buffer.from('a') })).toBe(tlsIdentity({ ca: Buffer.from('a') }));
    expect(tlsIdentity({ ca: Buffer.from('a') })).not.toBe(tlsIdentity({ ca: Buffer.from('b') }));
    expect(tlsIdentity({ ca: 'a', cert: 'one' })).not.toBe(tlsIdentity({ ca: 'a', cert: 'two' }));
    expect(tlsIdentity({ ca: 'a', rejectUnauthorized: false })).not.toBe(tlsIdentity({ ca: 'a' }));
  });
});
