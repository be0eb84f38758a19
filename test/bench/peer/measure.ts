/**
 * What the peer benchmark reads: a process's CPU and memory from /proc, and per-sandbox event times from
 * watches (pod Running, pod gone, Sandbox gone), so latencies come from the API server's own notifications
 * rather than from polling intervals.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** User + system CPU of a process so far, in ms (/proc/<pid>/stat utime + stime). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), which ends at the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** Resident set now and its high-water mark, in MiB (/proc/<pid>/status VmRSS, VmHWM). */
export function memoryMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/**
 * Waits until the process has used less than `budgetMs` CPU in each of two consecutive `windowMs` windows
 * (it has caught up), or `timeoutMs` passed; returns whether it went quiet.
 */
export async function quiet(
  pid: number,
  timeoutMs = 30_000,
  windowMs = 1_000,
  budgetMs = 30,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let calm = 0;
  let last = cpuMs(pid);
  while (Date.now() < deadline) {
    await delay(windowMs);
    const now = cpuMs(pid);
    calm = now - last < budgetMs ? calm + 1 : 0;
    last = now;
    if (calm >= 2) return true;
  }
  return false;
}

export type Timeline = {
  readonly running: Map<string, number>;
  readonly podGone: Map<string, number>;
  readonly sandboxGone: Map<string, number>;
  stop(): void;
};

export type Named = {
  metadata?: { name?: string; labels?: Record<string, string>; resourceVersion?: string };
  status?: { phase?: string };
};

/**
 * Watches the namespace's pods (and the subject's Sandboxes, when it has any) and records, per sandbox, the
 * first time its pod was Running, the time its pod was deleted, and the time the Sandbox was deleted.
 */
export async function watchTimeline(
  kc: KubeConfig,
  namespace: string,
  sandboxOf: (pod: Named) => string | undefined,
  sandboxPath: string | null,
): Promise<Timeline> {
  const running = new Map<string, number>();
  const podGone = new Map<string, number>();
  const sandboxGone = new Map<string, number>();
  const watch = new Watch(kc);
  const pods = await follow(watch, `/api/v1/namespaces/${namespace}/pods`, 'pod', (type, pod) => {
    const sandbox = sandboxOf(pod);
    if (sandbox === undefined) return;
    const now = performance.now();
    if (type === 'DELETED') podGone.set(sandbox, now);
    else if (pod.status?.phase === 'Running' && !running.has(sandbox)) running.set(sandbox, now);
  });
  const sandboxes =
    sandboxPath === null
      ? null
      : await follow(watch, sandboxPath, 'Sandbox', (type, sandbox) => {
          const name = sandbox.metadata?.name;
          if (type === 'DELETED' && name !== undefined) sandboxGone.set(name, performance.now());
        });
  return {
    running,
    podGone,
    sandboxGone,
    stop() {
      pods.stop();
      sandboxes?.stop();
    },
  };
}

/**
 * A watch that resumes from the last resourceVersion it saw when it ends (client-node ends a watch after 30 s
 * without an event, and a phase can be quieter than that), until stopped.
 */
export async function follow(
  watch: Watch,
  path: string,
  what: string,
  onEvent: (type: string, object: Named) => void,
): Promise<{ stop(): void }> {
  let stopped = false;
  let resourceVersion: string | undefined;
  let current: AbortController | undefined;
  const start = async (): Promise<void> => {
    current = await watch.watch(
      path,
      resourceVersion === undefined ? {} : { resourceVersion },
      (type: string, object: Named) => {
        resourceVersion = object.metadata?.resourceVersion ?? resourceVersion;
        onEvent(type, object);
      },
      (error: unknown) => {
        if (stopped) return;
        if (error && !(error instanceof Error && error.name === 'TimeoutError'))
          console.error(`bench: the ${what} watch ended; resuming:`, error);
        start().catch((cause: unknown) => console.error(`bench: the ${what} watch did not resume:`, cause));
      },
    );
  };
  await start();
  return {
    stop() {
      stopped = true;
      current?.abort();
    },
  };
}

/** Polls until `check` holds or `timeoutMs` passed; throws naming what it waited for. */
export async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(50);
  }
}
