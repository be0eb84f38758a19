/**
 * A loopback HTTP proxy in front of the test API server that can hold a chosen request until the test lets it
 * go, so an interleaving ("the reference changes between the LIST and the DELETE") is forced, not hoped for.
 * Clients get a kubeconfig for http://127.0.0.1:<port> with the same bearer token; the proxy speaks TLS on.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * Returns a promise to hold the request until it settles, or undefined to pass it straight through. It sees
 * the request's body (read whole first), so a hold can pick one write among many to the same path.
 */
export type Hold = (method: string, url: string, body: string) => Promise<void> | undefined;

/**
 * Returns, for a response that should be gated chunk by chunk (a watch stream), a function whose promise each
 * chunk waits for before it reaches the client; undefined to pipe the response straight through.
 */
export type Valve = (method: string, url: string) => (() => Promise<void>) | undefined;

export type HoldingProxy = { readonly kubeConfig: KubeConfig; close(): Promise<void> };

export async function startHoldingProxy(
  upstream: KubeConfig,
  hold: Hold,
  valve: Valve = () => undefined,
): Promise<HoldingProxy> {
  const cluster = upstream.getCurrentCluster();
  const user = upstream.getCurrentUser();
  if (!cluster || !user?.token) throw new Error('the upstream kubeconfig needs a cluster and a token user');
  const target = new URL(cluster.server);
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', (error) => res.destroy(error));
    req.on('end', () => relay(req, Buffer.concat(chunks), res));
  });
  const relay = (req: IncomingMessage, body: Buffer, res: ServerResponse) => {
    const forward = () => {
      const upstreamReq = httpsRequest(
        {
          hostname: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: target.host },
          ...(ca ? { ca } : {}),
        },
        (upstreamRes) => {
          res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
          const gate = valve(req.method ?? 'GET', req.url ?? '/');
          if (gate === undefined) upstreamRes.pipe(res);
          else passThrough(upstreamRes, res, gate);
        },
      );
      upstreamReq.on('error', (error) => res.destroy(error));
      upstreamReq.end(body);
    };
    const held = hold(req.method ?? 'GET', req.url ?? '/', body.toString('utf8'));
    if (held === undefined) forward();
    else void held.then(forward, (error: unknown) => res.destroy(error as Error));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    // Plain HTTP on loopback; client-node wants skipTLSVerify to allow http at all.
    clusters: [{ name: 'proxy', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'proxy', token: user.token }],
    contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy' }],
    currentContext: 'proxy',
  });
  return {
    kubeConfig,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Forwards each chunk once the gate opens, in order; the end waits for the last chunk. */
function passThrough(from: IncomingMessage, to: ServerResponse, gate: () => Promise<void>): void {
  let written = Promise.resolve();
  from.on('data', (chunk: Buffer) => {
    written = written.then(gate).then(() => void to.write(chunk));
  });
  from.on('end', () => void written.then(() => to.end()));
  from.on('error', (error) => to.destroy(error));
}

/**
 * A gate on the Sandbox watch's stream: once frozen, its events wait until thawed. A lagging Sandbox watch
 * beside live reference and pod watches, forced rather than hoped for (incarnation and final-decision tests).
 */
export function sandboxWatchGate() {
  let frozen = false;
  let open: () => void = () => undefined;
  const thawed = new Promise<void>((resolve) => (open = resolve));
  const valve: Valve = (method, url) =>
    method === 'GET' && url.includes('/sandboxes') && url.includes('watch=')
      ? () => (frozen ? thawed : Promise.resolve())
      : undefined;
  return {
    valve,
    freeze: () => void (frozen = true),
    thaw: () => open(),
    get frozen() {
      return frozen;
    },
  };
}
