/**
 * The three subjects of issue 13's side-by-side run, each doing "N sandboxes of one pod" its own way: the
 * raw baseline creates and deletes the pods itself; agent-sandbox and our operator each run as their own
 * process, out of cluster, and turn Sandbox objects into pods.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, createWriteStream, openSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_NODE_OPTIONS } from '../../harness/operator-bundle.ts';
import { LABELS } from '../../../operator/api/names.ts';
import { kwokNodeName, type LocalCluster } from '@sandbox-operator/local-cluster';
import { sandboxBody, createSandbox, type Clients } from '../controller/cluster.ts';
import { freePort } from '../controller/probe.ts';
import { peerArgs } from './agent-sandbox.ts';

export type Pod = {
  metadata?: {
    name?: string;
    labels?: Record<string, string>;
    ownerReferences?: { kind?: string; name?: string }[];
  };
  status?: { phase?: string };
};

export interface Controller {
  readonly pid: number;
  /** Serving and caught up with what it watches. */
  ready(): Promise<boolean>;
  /** Sends a signal (the heap snapshot's SIGUSR2) to the process. */
  signal(signal: NodeJS.Signals): void;
  stop(): Promise<void>;
}

export interface Subject {
  readonly name: 'raw' | 'agent-sandbox' | 'ours' | 'ours (profiled)';
  /** The controller process, or null for the raw client. */
  start(cluster: LocalCluster, namespace: string): Promise<Controller | null>;
  create(c: Clients, namespace: string, name: string): Promise<unknown>;
  remove(c: Clients, namespace: string, name: string): Promise<unknown>;
  /** Which sandbox a pod belongs to (undefined: not the subject's). */
  sandboxOf(pod: Pod): string | undefined;
  /** The watch path of the subject's Sandbox objects, or null when it has none. */
  sandboxPath(namespace: string): string | null;
}

const container = { name: 'agent', image: 'agent:1' };

function controllerProcess(child: ChildProcess, ready: () => Promise<boolean>): Controller {
  if (child.pid === undefined) throw new Error('bench: the controller process did not start');
  const pid = child.pid;
  let exited = false;
  child.once('exit', (code, signal) => {
    exited = true;
    if (code !== 0 && signal !== 'SIGTERM')
      console.error(`bench: controller ${pid} exited (${code ?? signal})`);
  });
  return {
    pid,
    ready,
    signal: (signal) => child.kill(signal),
    async stop() {
      if (exited) return;
      const gone = once(child, 'exit');
      child.kill('SIGTERM');
      await gone;
    },
  };
}

const serving = (url: string) =>
  fetch(url).then(
    (r) => r.status === 200,
    () => false,
  );

export const raw: Subject = {
  name: 'raw',
  start: () => Promise.resolve(null),
  create: (c, namespace, name) =>
    c.core.createNamespacedPod({
      namespace,
      body: { metadata: { name }, spec: { nodeName: kwokNodeName(0), containers: [container] } },
    }),
  remove: (c, namespace, name) => c.core.deleteNamespacedPod({ namespace, name }),
  sandboxOf: (pod) => pod.metadata?.name,
  sandboxPath: () => null,
};

/**
 * The peer's controller as its own process, its log in the cluster's temp dir (`extensions`: `--extensions`;
 * `kubeconfig`: another identity than the cluster's admin).
 */
export async function startAgentSandbox(
  binary: string,
  cluster: LocalCluster,
  {
    extensions = false,
    kubeconfig = cluster.kubeconfigPath,
  }: { readonly extensions?: boolean; readonly kubeconfig?: string } = {},
): Promise<Controller> {
  const [metrics, probe] = [await freePort(), await freePort()];
  const args = peerArgs(kubeconfig, metrics, probe, { extensions });
  const log = createWriteStream(join(cluster.tempDir, 'agent-sandbox.log'), { flags: 'a' });
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  return controllerProcess(child, () => serving(`http://127.0.0.1:${probe}/readyz`));
}

export function agentSandbox(binary: string): Subject {
  return {
    name: 'agent-sandbox',
    start: (cluster) => startAgentSandbox(binary, cluster),
    create: (c, namespace, name) =>
      c.custom.createNamespacedCustomObject({
        group: 'agents.x-k8s.io',
        version: 'v1beta1',
        namespace,
        plural: 'sandboxes',
        body: {
          apiVersion: 'agents.x-k8s.io/v1beta1',
          kind: 'Sandbox',
          metadata: { name },
          spec: { podTemplate: { spec: { nodeName: kwokNodeName(0), containers: [container] } } },
        },
      }),
    remove: (c, namespace, name) =>
      c.custom.deleteNamespacedCustomObject({
        group: 'agents.x-k8s.io',
        version: 'v1beta1',
        namespace,
        plural: 'sandboxes',
        name,
      }),
    sandboxOf: (pod) => pod.metadata?.ownerReferences?.find((ref) => ref.kind === 'Sandbox')?.name,
    sandboxPath: (namespace) => `/apis/agents.x-k8s.io/v1beta1/namespaces/${namespace}/sandboxes`,
  };
}

export type OursOptions = {
  /** The operator's entry point: the bundle (…/main.mjs), or BENCH_OPERATOR_MAIN's build. */
  readonly main: string;
  /** Where `--cpu-prof` and the heap snapshot go; null: no profiling. */
  readonly profileDir: string | null;
  /** The operator's own identity (the chart's ServiceAccount). */
  readonly kubeconfig: string;
  /** Where its log goes, at debug level (BENCH_OPERATOR_LOG); undefined: warnings only, to nowhere. */
  readonly logFile?: string | undefined;
};

/** Our operator as its own process, as the image runs it, watching one namespace with 8 workers. */
export async function startOurs(options: OursOptions, namespace: string): Promise<Controller> {
  const port = await freePort();
  const profile =
    options.profileDir === null
      ? []
      : [
          '--cpu-prof',
          `--cpu-prof-dir=${options.profileDir}`,
          `--diagnostic-dir=${options.profileDir}`,
          '--heapsnapshot-signal=SIGUSR2',
        ];
  const args = [
    ...IMAGE_NODE_OPTIONS,
    ...profile,
    options.main,
    '--workers',
    '8',
    '--leader-elect',
    'false',
    '--log-level',
    options.logFile === undefined ? 'warn' : 'debug',
    '--probe-bind',
    `127.0.0.1:${port}`,
    '--metrics-bind',
    `127.0.0.1:${port}`,
    '--namespace',
    namespace,
  ];
  const log = options.logFile === undefined ? 'ignore' : openSync(options.logFile, 'a');
  const child = spawn(process.execPath, args, {
    env: { ...process.env, KUBECONFIG: options.kubeconfig, SANDBOX_OPERATOR_LOG_FORMAT: 'json' },
    stdio: ['ignore', log, 'inherit'],
  });
  if (typeof log === 'number') closeSync(log);
  // Ready (caches synced); the bench then waits for its CPU to go quiet.
  return controllerProcess(child, () => serving(`http://127.0.0.1:${port}/readyz`));
}

export function ours(options: OursOptions): Subject {
  return {
    name: options.profileDir === null ? 'ours' : 'ours (profiled)',
    start: (_cluster, namespace) => startOurs(options, namespace),
    create: (c, namespace, name) => createSandbox(c, sandboxBody(namespace, name, 1)),
    remove: (c, namespace, name) =>
      c.custom.deleteNamespacedCustomObject({
        group: 'sandbox.agents.dev',
        version: 'v1alpha1',
        namespace,
        plural: 'sandboxes',
        name,
      }),
    sandboxOf: (pod) => pod.metadata?.labels?.[LABELS.sandbox],
    sandboxPath: (namespace) => `/apis/sandbox.agents.dev/v1alpha1/namespaces/${namespace}/sandboxes`,
  };
}
