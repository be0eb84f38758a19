/**
 * Operator memory with 10,000 sandboxes and 100,000 references cached, against the same operator with an
 * empty cache, measured in the same run from the operator's own process metrics (RSS, heap) and its
 * /proc status (peak RSS); then the operator restarted on that namespace, as after a roll-out: its start-up
 * (spawn to caches synced, every object listed) and its memory once it has reconciled every sandbox.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { LocalCluster } from '@sandbox-operator/local-cluster';
import { figure, heading, ms } from '../report.ts';
import { freePort, metric, queueSettled } from './probe.ts';
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
  type OperatorProcess,
  type Startup,
} from './cluster.ts';

const SANDBOXES = Number(process.env['BENCH_MEMORY_SANDBOXES'] ?? 10_000);
const REFERENCES_PER_SANDBOX = 10;

const mib = (bytes: number | undefined) =>
  bytes === undefined ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/** The process's peak resident set (VmHWM), from /proc. */
async function peakRss(operator: OperatorProcess): Promise<number | undefined> {
  const status = await readFile(`/proc/${String(operator.child.pid)}/status`, 'utf8').catch(() => '');
  const kib = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
  return kib === undefined ? undefined : Number(kib) * 1024;
}

const startupFigure = (label: string, startup: Startup) =>
  figure(label, `${ms(startup.syncedMs)} / ${ms(startup.reconcilingMs)}`, 'caches synced / reconciling');

async function memoryFigures(label: string, port: number, operator: OperatorProcess) {
  const rss = await metric(port, 'process_resident_memory_bytes');
  const heap = await metric(port, 'nodejs_heap_size_used_bytes');
  figure(
    `${label}: RSS / heap used / peak RSS`,
    `${mib(rss)} / ${mib(heap)} / ${mib(await peakRss(operator))}`,
  );
  return rss;
}

export async function memoryBenchmarks(cluster: LocalCluster): Promise<void> {
  const c = clients(cluster);
  await allowAdmin(c);
  const namespace = `bench-mem-${Date.now().toString(36)}`;
  await c.core.createNamespace({ body: { metadata: { name: namespace } } });
  const port = await freePort();
  heading(
    `Operator memory: ${SANDBOXES} sandboxes and ${SANDBOXES * REFERENCES_PER_SANDBOX} references cached`,
  );
  let operator = await startOperator(cluster, namespace, 8, ['--probe-bind', `127.0.0.1:${port}`]);
  try {
    startupFigure('start-up, empty namespace: spawn ->', await operator.startup);
    await waitFor(
      'operator ready',
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      60_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const empty = await memoryFigures('empty cache', port, operator);

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
    const full = await memoryFigures(
      `cached ${SANDBOXES} sandboxes + ${SANDBOXES} pods + ${SANDBOXES * REFERENCES_PER_SANDBOX} refs`,
      port,
      operator,
    );
    if (full !== undefined && empty !== undefined) {
      figure(
        'RSS per cached reference (above the empty baseline)',
        `${(((full - empty) / (SANDBOXES * REFERENCES_PER_SANDBOX + 2 * SANDBOXES)) | 0).toString()} B/object`,
      );
      figure('ratio: full cache RSS / empty cache RSS', `${(full / empty).toFixed(1)}x`);
    }

    // A restart on the full namespace: every object arrives in one LIST, every sandbox is reconciled once.
    await operator.stop();
    operator = await startOperator(cluster, namespace, 8, ['--probe-bind', `127.0.0.1:${port}`]);
    startupFigure('restart on the full namespace: spawn ->', await operator.startup);
    const restarted = performance.now();
    await waitFor('every sandbox reconciled after the restart', () => queueSettled(port), 1_800_000);
    figure(
      'restart: reconciling -> every sandbox reconciled, queue empty',
      ms(performance.now() - restarted),
    );
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    await memoryFigures('restarted, queue drained', port, operator);

    // The same restart with other builds (e.g. main's, or tsc's per-file build), on the same objects: before/after in one run.
    for (const other of (process.env['BENCH_OPERATOR_BASELINE'] ?? '').split(',').filter(Boolean)) {
      await operator.stop();
      const entry = resolve(other);
      operator = await startOperator(cluster, namespace, 8, ['--probe-bind', `127.0.0.1:${port}`], { entry });
      figure(`restart with ${entry.replace(/.*sandbox-operator\//, '')}`, '');
      startupFigure('    spawn ->', await operator.startup);
      const otherStarted = performance.now();
      await waitFor(`every sandbox reconciled by ${entry}`, () => queueSettled(port), 1_800_000);
      figure('    reconciling -> queue empty', ms(performance.now() - otherStarted));
      await new Promise((resolveWait) => setTimeout(resolveWait, 10_000));
      await memoryFigures('    queue drained', port, operator);
    }
  } finally {
    await operator.stop();
    await c.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
}
