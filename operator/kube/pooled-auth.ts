/**
 * One connection pool per TLS identity. client-node 2.0.1's KubeConfig.applySecurityAuthentication builds a
 * new undici Agent for every request (its createDispatcher is not cached), so every request opened a TLS
 * connection of its own: under issue 13's bench the handshakes and SecureContexts were about half of the
 * operator's CPU. This authentication still lets the KubeConfig set each request's headers (a token file or
 * exec plugin is read as before), then hands the request the Agent already open for the same TLS material
 * (CA, client certificate and key, verification settings); new material, such as a rotated exec client
 * certificate, gets a new Agent.
 */
import type { KubeConfig, RequestContext, SecurityAuthentication } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';
import type { Dispatcher } from 'undici';

const text = (value: unknown): unknown =>
  Buffer.isBuffer(value) ? value.toString('base64') : Array.isArray(value) ? value.map(text) : value;

/** The TLS material a request's connection depends on, as a map key. */
export function tlsIdentity(options: RequestOptions): string {
  const { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername } = options;
  return JSON.stringify([ca, cert, key, pfx, passphrase, rejectUnauthorized, servername].map(text));
}

export function pooledAuthentication(config: KubeConfig): SecurityAuthentication {
  const pools = new Map<string, Dispatcher>();
  return {
    getName: () => 'kubeconfig, pooled connections',
    async applySecurityAuthentication(context: RequestContext) {
      await config.applySecurityAuthentication(context);
      const fresh = context.getDispatcher();
      if (fresh === undefined) return; // plain http: no TLS material, undici's global pool
      const options: RequestOptions = {};
      await config.applyToHTTPSOptions(options);
      const identity = tlsIdentity(options);
      const pooled = pools.get(identity);
      if (pooled === undefined) {
        pools.set(identity, fresh);
        return;
      }
      // The fresh Agent never connected; closing it frees nothing but says it is not used.
      void fresh.close();
      context.setDispatcher(pooled);
    },
  };
}
