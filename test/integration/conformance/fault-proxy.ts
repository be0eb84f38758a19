/**
 * A loopback HTTP proxy in front of the test API server that can hold a request until the test lets it go,
 * and rewrite the body of an answer, so a scenario forces what a real cluster only sometimes does: a DELETE
 * that never answers, a change between a LIST and a DELETE, a Sandbox written by a newer operator or one the
 * client cannot read. Any client, in any language, reaches it through the kubeconfig file it writes (plain
 * HTTP on loopback, the upstream's bearer token); the proxy speaks TLS to the API server.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** Returns a promise to hold the request until it settles, or undefined to pass it straight through. */
export type Hold = (method: string, url: string, headers: IncomingHttpHeaders) => Promise<void> | undefined;
/** Returns the body to answer instead of `body` (the API server's, as text), or undefined to keep it. */
export type Rewrite = (method: string, url: string, body: string) => string | undefined;

export type FaultProxy = {
  readonly server: string;
  /** A kubeconfig file for the proxy, written into the directory given to startFaultProxy. */
  readonly kubeconfigPath: string;
  close(): Promise<void>;
};

export type Faults = { readonly hold?: Hold; readonly rewrite?: Rewrite };

export async function startFaultProxy(
  upstream: KubeConfig,
  directory: string,
  faults: () => Faults,
): Promise<FaultProxy> {
  const cluster = upstream.getCurrentCluster();
  const user = upstream.getCurrentUser();
  if (!cluster || !user?.token) throw new Error('the upstream kubeconfig needs a cluster and a token user');
  const target = new URL(cluster.server);
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined;
  const server = createServer((req: IncomingMessage, res) => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const forward = () => {
      // Without Accept-Encoding the API server answers uncompressed, so a rewrite sees plain JSON.
      const { 'accept-encoding': _encoding, ...headers } = req.headers;
      const upstreamReq = httpsRequest(
        {
          hostname: target.hostname,
          port: target.port,
          path: url,
          method,
          headers: { ...headers, host: target.host },
          ...(ca ? { ca } : {}),
        },
        (upstreamRes) => {
          const rewrite = faults().rewrite;
          if (rewrite === undefined || url.includes('watch=')) {
            res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
            upstreamRes.pipe(res);
            return;
          }
          const chunks: Buffer[] = [];
          upstreamRes.on('data', (chunk: Buffer) => chunks.push(chunk));
          upstreamRes.on('error', (error) => res.destroy(error));
          upstreamRes.on('end', () => {
            const original = Buffer.concat(chunks).toString('utf8');
            const body = rewrite(method, url, original) ?? original;
            const { 'content-length': _length, 'transfer-encoding': _chunked, ...rest } = upstreamRes.headers;
            res.writeHead(upstreamRes.statusCode ?? 502, {
              ...rest,
              'content-length': Buffer.byteLength(body),
            });
            res.end(body);
          });
        },
      );
      upstreamReq.on('error', (error) => res.destroy(error));
      req.pipe(upstreamReq);
    };
    const held = faults().hold?.(method, url, req.headers);
    if (held === undefined) forward();
    else void held.then(forward, (error: unknown) => res.destroy(error instanceof Error ? error : undefined));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const address = `http://127.0.0.1:${port}`;
  const kubeconfigPath = join(directory, `proxy-${port}.kubeconfig`);
  await writeFile(kubeconfigPath, proxyKubeconfig(address, user.token));
  return {
    server: address,
    kubeconfigPath,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A kubeconfig every client reads alike (YAML is a superset of JSON). */
const proxyKubeconfig = (server: string, token: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    // client-node refuses plain http unless TLS verification is off; there is no TLS to verify on loopback.
    clusters: [{ name: 'proxy', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'proxy', user: { token } }],
    contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'proxy' } }],
    'current-context': 'proxy',
  });
