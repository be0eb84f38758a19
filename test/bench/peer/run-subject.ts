/**
 * One subject, one N: create N sandboxes at once (8 requests in flight), wait until every pod runs, then
 * delete them all at once and wait until every pod and Sandbox is gone. Each phase is closed when the
 * controller has gone quiet, so the CPU and request counts include its trailing work (status writes).
 */
import type { LocalCluster } from '@sandbox-operator/local-cluster';
import { apiserverRequests, createMany, requestDelta, type Clients } from '../controller/cluster.ts';
import { percentile } from '../report.ts';
import { cpuMs, memoryMiB, quiet, until, watchTimeline } from './measure.ts';
import type { Subject } from './subjects.ts';

export const IN_FLIGHT = 8;

export type PhaseCost = {
  /** All clients' requests in the phase (the bench's own creates or deletes included), by "VERB resource". */
  readonly requests: Map<string, number>;
  readonly apiserverCpuMs: number;
  /** null for the raw client, which has no controller. */
  readonly controllerCpuMs: number | null;
};

export type SubjectResult = {
  readonly subject: Subject['name'];
  readonly count: number;
  readonly createToRunningP50: number;
  readonly wallRunning: number;
  readonly deleteToPodGoneP50: number;
  /** null when the subject has no Sandbox object. */
  readonly deleteToSandboxGoneP50: number | null;
  readonly wallGone: number;
  readonly create: PhaseCost;
  readonly remove: PhaseCost;
  /** MiB; null for the raw client. */
  readonly rss: { idle: number; steady: number; peak: number } | null;
  /** Whether the controller went quiet after each phase (false: the phase closed on its timeout). */
  readonly settled: boolean;
};

type Phase = 'create' | 'remove';

/** API requests per sandbox in a phase, all clients (keys ending in a space are not requests). */
export const requestsPerSandbox = (r: SubjectResult, phase: Phase): number =>
  [...r[phase].requests].filter(([key]) => !key.endsWith(' ')).reduce((sum, [, n]) => sum + n, 0) / r.count;

/** The controller's CPU ms per sandbox in a phase; null for the raw client. */
export const cpuPerSandbox = (r: SubjectResult, phase: Phase): number | null => {
  const ms = r[phase].controllerCpuMs;
  return ms === null ? null : ms / r.count;
};

export type RunOptions = {
  /** Called once the create phase has been measured, before the delete phase (the heap snapshot). */
  readonly atSteadyState?: (pid: number) => Promise<void>;
  /** Started with the delete phase and awaited after it (the API server's profile). */
  readonly duringDelete?: () => Promise<void>;
};

const latencies = (from: Map<string, number>, to: Map<string, number>) =>
  [...from].map(([name, sent]) => (to.get(name) ?? Number.NaN) - sent).sort((a, b) => a - b);

export async function runSubject(
  cluster: LocalCluster,
  c: Clients,
  subject: Subject,
  count: number,
  options: RunOptions = {},
): Promise<SubjectResult> {
  const slug = subject.name.replace(/[^a-z0-9]+/g, '-').replace(/-$/, '');
  const namespace = `peer-${slug}-${count}-${Date.now().toString(36)}`;
  await c.core.createNamespace({ body: { metadata: { name: namespace } } });
  const names = Array.from({ length: count }, (_, i) => `sbx-${String(i).padStart(4, '0')}`);
  const apiserver = cluster.pids()['kube-apiserver'];
  if (apiserver === undefined) throw new Error('bench: no kube-apiserver pid');
  const timeline = await watchTimeline(
    c.kc,
    namespace,
    (pod) => subject.sandboxOf(pod),
    subject.sandboxPath(namespace),
  );
  const controller = await subject.start(cluster, namespace);
  try {
    let settled = true;
    if (controller !== null) {
      const readyBy = Date.now() + 120_000;
      while (!(await controller.ready())) {
        if (Date.now() > readyBy) throw new Error(`bench: ${subject.name} not ready after 120 s`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      settled = (await quiet(controller.pid)) && settled;
    }
    const idle = controller === null ? null : memoryMiB(controller.pid).rss;
    const phaseTimeout = 120_000 + count * 300;

    const phase = async (act: (name: string) => Promise<unknown>, done: () => boolean, what: string) => {
      const requestsBefore = await apiserverRequests(cluster);
      const apiBefore = cpuMs(apiserver);
      const ctlBefore = controller === null ? 0 : cpuMs(controller.pid);
      const sent = new Map<string, number>();
      const started = performance.now();
      await createMany(
        names,
        async (name) => {
          sent.set(name, performance.now());
          await act(name);
        },
        IN_FLIGHT,
      );
      await until(what, done, phaseTimeout);
      if (controller !== null) settled = (await quiet(controller.pid)) && settled;
      const cost: PhaseCost = {
        requests: requestDelta(requestsBefore, await apiserverRequests(cluster)),
        apiserverCpuMs: cpuMs(apiserver) - apiBefore,
        controllerCpuMs: controller === null ? null : cpuMs(controller.pid) - ctlBefore,
      };
      return { sent, started, cost };
    };

    const created = await phase(
      (name) => subject.create(c, namespace, name),
      () => timeline.running.size >= count,
      `${count} pods Running (${subject.name})`,
    );
    const steady = controller === null ? null : memoryMiB(controller.pid).rss;
    if (controller !== null && options.atSteadyState) await options.atSteadyState(controller.pid);

    const hasSandboxes = subject.sandboxPath(namespace) !== null;
    const during = options.duringDelete?.();
    const removed = await phase(
      (name) => subject.remove(c, namespace, name),
      () => timeline.podGone.size >= count && (!hasSandboxes || timeline.sandboxGone.size >= count),
      `${count} pods and Sandboxes gone (${subject.name})`,
    );
    await during;
    const peak = controller === null ? null : memoryMiB(controller.pid).peak;
    const lastGone = Math.max(...timeline.podGone.values(), ...timeline.sandboxGone.values());
    return {
      subject: subject.name,
      count,
      createToRunningP50: percentile(latencies(created.sent, timeline.running), 50),
      wallRunning: Math.max(...timeline.running.values()) - created.started,
      deleteToPodGoneP50: percentile(latencies(removed.sent, timeline.podGone), 50),
      deleteToSandboxGoneP50: hasSandboxes
        ? percentile(latencies(removed.sent, timeline.sandboxGone), 50)
        : null,
      wallGone: lastGone - removed.started,
      create: created.cost,
      remove: removed.cost,
      rss: idle === null || steady === null || peak === null ? null : { idle, steady, peak },
      settled,
    };
  } finally {
    timeline.stop();
    await controller?.stop();
    // The namespace is left (empty) in place: deleting it would put the namespace controller's sweep of
    // every resource kind into the next subject's phases.
  }
}
