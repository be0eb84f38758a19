/**
 * One connection pool per TLS identity. client-node 2.0.1's KubeConfig.applySecurityAuthentication builds a
 * new undici Agent for every request (its createDispatcher is not cached), so every request opened a TLS
 * connection of its own: under issue 13's bench the handshakes and SecureContexts were about half of the
 * operator's CPU. This authentication reads the KubeConfig once per request, as client-node does (a token
 * file or exec plugin is read as before), sets that request's headers, and hands it the Agent already open
 * for the same TLS material (CA, client certificate and key, verification settings); new material, such as
 * a rotated exec client certificate, gets a new Agent, built by the KubeConfig.
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
      // One read of the KubeConfig per request (token files and exec plugins are read as before): its TLS
      // material names the pool, its headers are this request's.
      const options: RequestOptions = {};
      await config.applyToHTTPSOptions(options);
      const identity = tlsIdentity(options);
      const pooled = pools.get(identity);
      if (pooled === undefined) {
        // New material: the KubeConfig builds the Agent (proxies included) and sets the headers.
        await config.applySecurityAuthentication(context);
        const fresh = context.getDispatcher();
        if (fresh !== undefined) pools.set(identity, fresh); // undefined: plain http, undici's global pool
        return;
      }
      // As KubeConfig.applySecurityAuthentication sets them, without building an Agent it would discard.
      const user = config.getCurrentUser();
      if (user?.username)
        context.setHeaderParam(
          'Authorization',
          `Basic ${Buffer.from(`${user.username}:${String(user.password)}`).toString('base64')}`,
        );
      for (const [name, value] of Object.entries(options.headers ?? {}))
        context.setHeaderParam(name, String(value));
      context.setDispatcher(pooled);
    },
  };
}
