/**
 * The operator's HTTP endpoints: /healthz (the process serves), /readyz (caches synced), /metrics
 * (Prometheus); /readyz says why it is not ready. One server; the chart points probes and the ServiceMonitor at it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export type ProbeState = {
  /** Undefined when ready; otherwise why not, in words /readyz answers with. */
  readonly notReady: () => string | undefined;
  readonly healthy: () => boolean;
};

export async function serveProbes(
  bind: string,
  registry: Registry,
  state: ProbeState,
  log: Logger,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (code: number, body: string, type = 'text/plain') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (path === '/healthz') return answer(state.healthy() ? 200 : 500, state.healthy() ? 'ok' : 'unhealthy');
    if (path === '/readyz') {
      const reason = state.notReady();
      return answer(reason === undefined ? 200 : 503, reason ?? 'ok');
    }
    if (path === '/metrics') {
      registry
        .metrics()
        .then((text) => answer(200, text, registry.contentType))
        .catch((error: unknown) => {
          log.error({ err: error }, 'rendering metrics failed');
          answer(500, 'metrics unavailable');
        });
      return;
    }
    answer(404, 'not found');
  });
  const { host, port } = parseBind(bind);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  log.info({ address: `${address.address}:${address.port}` }, 'serving /healthz, /readyz and /metrics');
  return server;
}

/** `:8080`, `0.0.0.0:8080` or `127.0.0.1:0`. */
export function parseBind(bind: string): { host: string; port: number } {
  const at = bind.lastIndexOf(':');
  const host = at <= 0 ? '0.0.0.0' : bind.slice(0, at);
  const port = Number.parseInt(bind.slice(at + 1), 10);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`invalid bind address "${bind}": expected host:port`);
  return { host, port };
}
