/** Issue 4's figures, on a local control plane of their own (kwok with fake nodes). */
import { pino } from 'pino';
import { startLocalCluster } from '@sandbox-operator/local-cluster';
import { deletionBenchmarks } from './deletion.ts';
import { latencyBoundBenchmarks } from './latency.ts';
import { memoryBenchmarks } from './memory.ts';

export async function controllerBenchmarks(): Promise<void> {
  const cluster = await startLocalCluster({ logger: pino({ level: 'warn' }) });
  try {
    if (process.env['BENCH_SKIP_DELETION'] !== '1') await deletionBenchmarks(cluster);
    if (process.env['BENCH_SKIP_LATENCY'] !== '1') await latencyBoundBenchmarks(cluster);
    if (process.env['BENCH_SKIP_MEMORY'] !== '1') await memoryBenchmarks(cluster);
  } finally {
    await cluster.stop();
  }
}
