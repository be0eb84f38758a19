/**
 * How /metrics is served, from the flags: guarded by the API server's reviews with `--metrics-auth`
 * (docs/security.md, "/metrics and the probes"), over HTTPS with `--metrics-cert-dir` (tls.crt and tls.key,
 * as controller-runtime's CertDir and a kubernetes.io/tls Secret name them).
 */
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { JsonClient } from '../../kube/plain-json.ts';
import { kubeAccessReviews } from '../../runtime/access-reviews.ts';
import { metricsGuard } from '../../runtime/metrics-access.ts';
import { readServingCertificate } from '../../runtime/listener.ts';
import { serveProbes, type MetricsServing, type ProbeState } from '../../runtime/probes.ts';
import type { OperatorConfig } from './config.ts';

export function metricsServing(config: OperatorConfig, json: JsonClient): MetricsServing {
  const dir = config.metricsCertDir;
  return {
    ...(config.metricsAuth ? { guard: metricsGuard(kubeAccessReviews(json)) } : {}),
    ...(dir === undefined ? {} : { tls: readServingCertificate(dir) }),
  };
}

/** The probe and metrics listeners as the flags say. */
export function serveEndpoints(
  config: OperatorConfig,
  json: JsonClient,
  registry: Registry,
  state: ProbeState,
  log: Logger,
): Promise<Server> {
  const binds = { probe: config.probeBind, metrics: config.metricsBind };
  return serveProbes(binds, registry, state, log, metricsServing(config, json));
}
