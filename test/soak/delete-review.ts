/**
 * The soak runs with the operator's delete review registered (docs/adr/0011): every Sandbox and SessionReference
 * DELETE the operator makes in a sequence passes through it, under the fault proxy and the kills, and invariants
 * 3 (no-lost-reference) and 5 (cleanup-unreferenced) judge what it admitted; a refused delete the operator needed
 * shows as a release that never finishes (2 bounded-release). Each replica serves it on a port of its own, below the kernel's ephemeral range (a restarted replica
 * binds it again, and no outgoing connection can have taken it meanwhile); the forwarder is the one URL the API
 * server calls.
 */
import { createServer } from 'node:net';
import { operatorReviewWebhook } from '../../operator/api/operator-review.ts';
import { loopbackCertificate } from '@sandbox-operator/local-cluster/certificate';
import { kubectlOk } from '../harness/kube.ts';
import { ReviewForwarder } from './review-forwarder.ts';

/** Below /proc/sys/net/ipv4/ip_local_port_range's start (32768 by default). */
const PORTS = { from: 20_000, to: 32_000 } as const;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

async function reviewPorts(count: number, seed: number): Promise<number[]> {
  const ports: number[] = [];
  const span = PORTS.to - PORTS.from;
  for (let step = 0; ports.length < count && step < span; step++) {
    const port = PORTS.from + ((seed + step * 7919) % span);
    if (!ports.includes(port) && (await bindable(port))) ports.push(port);
  }
  if (ports.length < count) throw new Error(`no ${count} free ports in ${PORTS.from}..${PORTS.to}`);
  return ports;
}

export type SoakDeleteReview = {
  readonly replicaFlags: (index: number) => readonly string[];
  readonly forwarder: ReviewForwarder;
};

export async function registerDeleteReview(
  dir: string,
  replicas: number,
  operatorUser: string,
  seed: number,
): Promise<SoakDeleteReview> {
  const { certPem } = await loopbackCertificate('soak-review', dir);
  const ports = await reviewPorts(replicas, seed);
  const forwarder = new ReviewForwarder(ports);
  const port = await forwarder.start();
  const registration = operatorReviewWebhook({
    operatorUsers: [operatorUser],
    endpoint: { url: `https://127.0.0.1:${port}` },
    caBundlePem: certPem,
  });
  await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(registration) });
  return {
    forwarder,
    replicaFlags: (index) => ['--review-bind', `127.0.0.1:${ports[index] ?? 0}`, '--review-cert-dir', dir],
  };
}
