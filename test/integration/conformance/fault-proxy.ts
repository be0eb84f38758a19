/**
 * A loopback HTTP proxy in front of the test API server that can hold a request until the test lets it go,
 * rewrite the body of an answer, answer in the server's place and end a watch's stream, so a scenario forces
 * what a real cluster only sometimes does: a DELETE that never answers, a change between a LIST and a DELETE,
 * a Sandbox written by a newer operator or one the client cannot read, a watch that ends or expires (410).
 * Any client, in any language, reaches it through the kubeconfig file it writes (plain HTTP on loopback, the
 * upstream's bearer token); the proxy speaks TLS to the API server.
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

/** Returns an answer to give instead of the API server's (a watch's ERROR event, say), or undefined to forward. */
export type Answer = (
  method: string,
  url: string,
) => { readonly status: number; readonly body: string } | undefined;
/** For a watch: true ends its stream cleanly after forwarding `chunk` (as the server's timeout ends it). */
export type EndAfter = (url: string, chunk: string) => boolean;

export type Faults = {
  readonly hold?: Hold;
  readonly rewrite?: Rewrite;
  readonly answer?: Answer;
  readonly endAfter?: EndAfter;
};

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
      const answered = faults().answer?.(method, url);
      if (answered !== undefined) {
        req.resume();
        res.writeHead(answered.status, { 'content-type': 'application/json' });
        res.end(answered.body);
        return;
      }
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
          const endAfter = faults().endAfter;
          if (url.includes('watch=') && endAfter !== undefined) {
            res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
            upstreamRes.on('data', (chunk: Buffer) => {
              res.write(chunk);
              if (!endAfter(url, chunk.toString('utf8'))) return;
              upstreamRes.destroy();
              res.end();
            });
            upstreamRes.on('end', () => res.end());
            upstreamRes.on('error', (error) => res.destroy(error));
            return;
          }
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
