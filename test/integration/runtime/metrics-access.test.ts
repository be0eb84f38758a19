/**
 * /metrics exposed with authentication (issue 26, supply chain): `--metrics-auth true` makes the operator
 * ask the API server about every scraper, as controller-runtime's WithAuthenticationAndAuthorization does
 * — TokenReview for the bearer token, SubjectAccessReview for `get` on the non-resource URL /metrics. Real
 * API server, real ServiceAccount tokens; the listener binds to loopback only.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { get as httpsGet } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { Counter, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';
import { serveEndpoints } from '../../../operator/controller/wiring/metrics-serving.ts';
import { kubeClients } from '../../../operator/kube/clients.ts';
import { kubeAccessReviews } from '../../../operator/runtime/access-reviews.ts';
import { metricsGuard } from '../../../operator/runtime/metrics-access.ts';
import { serveProbes } from '../../../operator/runtime/probes.ts';
import { loopbackCertificate } from '@sandbox-operator/local-cluster/certificate';
import { kubeConfig, kubectlOk, serviceAccountKubeConfig, testNamespace } from '../../harness/kube.ts';

const namespace = testNamespace('metrics-access');
const reader = `metrics-reader-${namespace}`;
const log = pino({ level: 'silent' });
let server: Server | undefined;
let metricsUrl: string;
const tokens = { reader: '', stranger: '' };

async function tokenOf(account: string): Promise<string> {
  const user = (await serviceAccountKubeConfig(namespace, account)).getCurrentUser();
  return user?.token ?? '';
}

beforeAll(async () => {
  tokens.reader = await tokenOf('scraper');
  tokens.stranger = await tokenOf('stranger');
  // What the chart's metrics-reader ClusterRole grants, bound to the scraper alone.
  await kubectlOk(['create', 'clusterrole', reader, '--verb=get', '--non-resource-url=/metrics']);
  await kubectlOk([
    'create',
    'clusterrolebinding',
    reader,
    `--clusterrole=${reader}`,
    `--serviceaccount=${namespace}:scraper`,
  ]);
  const config = loadConfig(['--metrics-auth', 'true', '--metrics-bind', '127.0.0.1:0'], {});
  expect(config.metricsAuth).toBe(true);
  const registry = new Registry();
  new Counter({
    name: 'scraped_marker_total',
    help: 'proves the body is the registry',
    registers: [registry],
  });
  const metricsPort = await freePort();
  server = await serveProbes(
    { probe: '127.0.0.1:0', metrics: `127.0.0.1:${metricsPort}` },
    registry,
    { notReady: () => undefined, healthy: () => true },
    log,
    { guard: metricsGuard(kubeAccessReviews(kubeClients(kubeConfig()).json)) },
  );
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  await kubectlOk(['delete', 'clusterrolebinding,clusterrole', reader, '--ignore-not-found']);
});

const scrape = (token?: string) =>
  fetch(metricsUrl, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });

describe('/metrics with --metrics-auth', () => {
  it('answers 401 to a scraper with no token or a token the API server does not know', async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape('not-a-token')).status).toBe(401);
  });

  it('answers 403 to an authenticated identity without get on /metrics', async () => {
    const response = await scrape(tokens.stranger);
    expect(response.status).toBe(403);
    expect(await response.text()).toContain(`system:serviceaccount:${namespace}:stranger`);
  });

  it('serves the metrics to an identity granted get on /metrics', async () => {
    const response = await scrape(tokens.reader);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('scraped_marker_total');
  });
});

describe('/metrics with --metrics-auth and --metrics-cert-dir, as the operator wires them', () => {
  it('speaks HTTPS with the certificate given, and still asks for the token', async () => {
    const { dir } = await loopbackCertificate('metrics-tls');
    const port = await freePort();
    const flags = [
      '--metrics-auth',
      'true',
      '--metrics-cert-dir',
      dir,
      '--metrics-bind',
      `127.0.0.1:${port}`,
    ];
    const config = loadConfig([...flags, '--probe-bind', '127.0.0.1:0'], {});
    const tlsServer = await serveEndpoints(
      config,
      kubeClients(kubeConfig()).json,
      new Registry(),
      { notReady: () => undefined, healthy: () => true },
      log,
    );
    try {
      const ca = await readFile(join(dir, 'tls.crt'));
      const scrapeTls = (token?: string) =>
        new Promise<number>((resolve, reject) => {
          const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
          httpsGet(`https://127.0.0.1:${port}/metrics`, { ca, headers }, (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          }).on('error', reject);
        });
      expect(await scrapeTls()).toBe(401);
      expect(await scrapeTls(tokens.stranger)).toBe(403);
      expect(await scrapeTls(tokens.reader)).toBe(200);
      // Plain HTTP gets no metrics from the TLS listener.
      await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
    } finally {
      await new Promise((resolve) => tlsServer.close(resolve));
    }
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
