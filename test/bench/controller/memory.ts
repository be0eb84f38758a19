/**
 * Operator memory with 10,000 sandboxes and 100,000 references cached, against the same operator with an
 * empty cache, measured in the same run from the operator's own process metrics.
 */
import type { LocalCluster } from '../../../operator/local-cluster/index.ts';
import { figure, heading } from '../report.ts';
import { freePort, metric } from './probe.ts';
import {
  allowAdmin,
  clients,
  createMany,
  createReference,
  createSandbox,
  referenceBody,
  sandboxBody,
  startOperator,
  waitFor,
} from './cluster.ts';

const SANDBOXES = Number(process.env['BENCH_MEMORY_SANDBOXES'] ?? 10_000);
const REFERENCES_PER_SANDBOX = 10;

const mib = (bytes: number | undefined) =>
  bytes === undefined ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

export async function memoryBenchmarks(cluster: LocalCluster): Promise<void> {
  const c = clients(cluster);
  await allowAdmin(c);
  const namespace = `bench-mem-${Date.now().toString(36)}`;
  await c.core.createNamespace({ body: { metadata: { name: namespace } } });
  const port = await freePort();
  heading(
    `Operator memory: ${SANDBOXES} sandboxes and ${SANDBOXES * REFERENCES_PER_SANDBOX} references cached`,
  );
  const operator = startOperator(cluster, namespace, 8, ['--probe-bind', `127.0.0.1:${port}`]);
  try {
    await waitFor(
      'operator ready',
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      60_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const empty = await metric(port, 'process_resident_memory_bytes');
    const emptyHeap = await metric(port, 'nodejs_heap_size_used_bytes');
    figure('empty cache: RSS / heap used', `${mib(empty)} / ${mib(emptyHeap)}`);

    const started = Date.now();
    const names = Array.from({ length: SANDBOXES }, (_, i) => `sbx-${String(i).padStart(5, '0')}`);
    // Pods without a node stay Pending: the operator creates them, nothing runs them.
    await createMany(names, (name) => createSandbox(c, sandboxBody(namespace, name, 1, false)), 48);
    await createMany(
      names.flatMap((name) =>
        Array.from({ length: REFERENCES_PER_SANDBOX }, (_, i) =>
          referenceBody(namespace, name, i, i % 2 === 0 ? 'wt-1' : 'wt-2'),
        ),
      ),
      (body) => createReference(c, body),
      48,
    );
    figure('objects created', `${((Date.now() - started) / 1000).toFixed(0)} s`);
    await waitFor(
      'all cached and the queue drained',
      async () => {
        const refs = await metric(port, 'sandbox_operator_cached_objects', '{kind="SessionReference"}');
        const pods = await metric(port, 'sandbox_operator_cached_objects', '{kind="Pod"}');
        const depth = await metric(port, 'workqueue_depth', '{name="sandbox"}');
        return refs === SANDBOXES * REFERENCES_PER_SANDBOX && pods === SANDBOXES && depth === 0;
      },
      1_800_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const full = await metric(port, 'process_resident_memory_bytes');
    const fullHeap = await metric(port, 'nodejs_heap_size_used_bytes');
    figure(
      `cached ${SANDBOXES} sandboxes + ${SANDBOXES} pods + ${SANDBOXES * REFERENCES_PER_SANDBOX} refs: RSS / heap`,
      `${mib(full)} / ${mib(fullHeap)}`,
    );
    if (full !== undefined && empty !== undefined) {
      figure(
        'RSS per cached reference (above the empty baseline)',
        `${(((full - empty) / (SANDBOXES * REFERENCES_PER_SANDBOX + 2 * SANDBOXES)) | 0).toString()} B/object`,
      );
      figure('ratio: full cache RSS / empty cache RSS', `${(full / empty).toFixed(1)}x`);
    }
  } finally {
    await operator.stop();
    await c.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
}
