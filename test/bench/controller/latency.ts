/**
 * 8 workers against 1 where the control plane's CPU is not the bound: the measured operator reaches the API
 * server through a loopback proxy that holds each request for BENCH_API_LATENCY_MS (default 100 ms) before
 * forwarding it — an API server across a network, or one busy elsewhere — so a deletion's turns cost the
 * requests' latency, which workers overlap, more than the 2 cores' CPU, which they share. Watches are held
 * only when they open. The same deletions as the main figure (N sandboxes of 1 pod, no references).
 */
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { LocalCluster } from '@sandbox-operator/local-cluster';
import { startHoldingProxy } from '../../harness/holding-proxy.ts';
import { figure, heading, ratio } from '../report.ts';
import { allowAdmin, clients } from './cluster.ts';
import { report, run } from './deletion.ts';

const LATENCY_MS = Number(process.env['BENCH_API_LATENCY_MS'] ?? 100);
const SANDBOXES = Number(process.env['BENCH_LATENCY_SANDBOXES'] ?? 100);

export async function latencyBoundBenchmarks(cluster: LocalCluster): Promise<void> {
  const c = clients(cluster);
  await allowAdmin(c);
  heading(
    `Deleting ${SANDBOXES} sandboxes (1 pod each) with ${LATENCY_MS} ms added to every API request of the operator`,
  );
  let held = 0;
  const proxy = await startHoldingProxy(c.kc, () => {
    held += 1;
    return delay(LATENCY_MS);
  });
  const kubeconfigPath = join(tmpdir(), `bench-latency-${process.pid}.kubeconfig`);
  await writeFile(kubeconfigPath, proxy.kubeConfig.exportConfig(), { mode: 0o600 });
  try {
    const one = await run(cluster, c, 1, SANDBOXES, 0, { replicas: 1, kubeconfigPath });
    report('1 worker ', SANDBOXES, one);
    const eight = await run(cluster, c, 8, SANDBOXES, 0, { replicas: 1, kubeconfigPath });
    report('8 workers', SANDBOXES, eight);
    ratio('8 workers vs 1: wall time (latency-bound)', one.wallMs, eight.wallMs);
    figure('requests held by the proxy', String(held), 'both runs, watches included');
  } finally {
    await proxy.close();
  }
}
