/**
 * /metrics is not served on all interfaces by default (issue 15): the probes (/healthz, /readyz) listen
 * where the kubelet reaches them, /metrics only on loopback unless --metrics-bind says otherwise. Real
 * servers on loopback; the listener's own address tells which interface it bound.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';
import { parseBind, serveProbes } from '../../../operator/runtime/probes.ts';

const log = pino({ level: 'silent' });
const state = { notReady: () => undefined, healthy: () => true };
let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
});

describe('the operator’s endpoints', () => {
  it('bind /metrics to loopback by default, the probes to all interfaces', () => {
    const config = loadConfig([], {});
    expect(parseBind(config.probeBind).host).toBe('0.0.0.0');
    expect(parseBind(config.metricsBind).host).toBe('127.0.0.1');
  });

  it('serve /metrics only on its own listener when it has one', async () => {
    const metricsPort = await freePort();
    server = await serveProbes(
      { probe: '127.0.0.1:0', metrics: `127.0.0.1:${metricsPort}` },
      new Registry(),
      state,
      log,
    );
    const port = (server.address() as AddressInfo).port;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(404);
  });

  it('serve everything on one listener when both binds are the same', async () => {
    server = await serveProbes({ probe: '127.0.0.1:0', metrics: '127.0.0.1:0' }, new Registry(), state, log);
    const port = (server.address() as AddressInfo).port;
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
