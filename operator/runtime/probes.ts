/**
 * The operator's HTTP endpoints: /healthz (the process serves) and /readyz (caches synced) on the probe
 * listener, where the kubelet reaches them; /metrics (Prometheus) on the metrics listener, loopback by
 * default, because metrics are served without authentication unless a guard is given (issue 15, issue 26;
 * docs/security.md says how to scrape them). When both binds are the same, one listener serves all three.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { answer, listen, type Route, type ServingCertificate } from './listener.ts';
import type { MetricsGuard } from './metrics-access.ts';

export { parseBind } from './listener.ts';

export type ProbeState = {
  /** Undefined when ready; otherwise why not, in words /readyz answers with. */
  readonly notReady: () => string | undefined;
  readonly healthy: () => boolean;
};
export type EndpointBinds = { readonly probe: string; readonly metrics: string };
export type MetricsServing = {
  /** Who may read /metrics (metrics-access.ts); absent: anyone who reaches the listener. */
  readonly guard?: MetricsGuard;
  /** PEM certificate and key: the metrics listener speaks HTTPS, so a scraper's token is not sent in clear. */
  readonly tls?: ServingCertificate;
};

function probeRoute(state: ProbeState): Route {
  return (path, _req, res) => {
    if (path === '/healthz') answer(res, state.healthy() ? 200 : 500, state.healthy() ? 'ok' : 'unhealthy');
    else if (path === '/readyz') {
      const reason = state.notReady();
      answer(res, reason === undefined ? 200 : 503, reason ?? 'ok');
    } else return false;
    return true;
  };
}

function metricsRoute(registry: Registry, log: Logger, guard: MetricsGuard | undefined): Route {
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    if (guard !== undefined) {
      const verdict = await guard(req.headers.authorization);
      if (verdict.code !== 200) {
        log.debug({ code: verdict.code, reason: verdict.reason }, 'scrape of /metrics refused');
        answer(res, verdict.code, verdict.code === 401 ? 'Unauthorized' : `Forbidden: ${verdict.reason}`);
        return;
      }
    }
    answer(res, 200, await registry.metrics(), registry.contentType);
  };
  return (path, req, res) => {
    if (path !== '/metrics') return false;
    serve(req, res).catch((error: unknown) => {
      log.error({ err: error }, 'serving /metrics failed (a review or the rendering)');
      answer(res, 500, 'metrics unavailable');
    });
    return true;
  };
}

/** The probe listener; closing it closes the metrics listener too. */
export async function serveProbes(
  binds: EndpointBinds,
  registry: Registry,
  state: ProbeState,
  log: Logger,
  serving: MetricsServing = {},
): Promise<Server> {
  const probes = probeRoute(state);
  const metrics = metricsRoute(registry, log, serving.guard);
  if (binds.probe === binds.metrics) {
    // The kubelet probes over plain HTTP and without a token: a guarded or TLS /metrics needs its own port.
    if (serving.guard !== undefined || serving.tls !== undefined)
      throw new Error(
        `--metrics-bind must differ from --probe-bind (${binds.probe}) with --metrics-auth or --metrics-cert-dir`,
      );
    return listen(binds.probe, [probes, metrics], '/healthz, /readyz and /metrics', log);
  }
  const guarded = serving.guard === undefined ? '' : ' (TokenReview + SubjectAccessReview)';
  const metricsServer = await listen(binds.metrics, [metrics], `/metrics${guarded}`, log, serving.tls);
  try {
    const probeServer = await listen(binds.probe, [probes], '/healthz and /readyz', log);
    probeServer.on('close', () => metricsServer.close());
    return probeServer;
  } catch (error) {
    metricsServer.close();
    throw error;
  }
}
