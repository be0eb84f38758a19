/** Bench plumbing on the local control plane: bulk object creation, the operator as a process, apiserver metrics. */
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import pLimit from 'p-limit';
import { SANDBOX_DELETER, sandboxDeleter, setOperatorUsers } from '../../harness/admission.ts';
import { buildOperatorBundle, IMAGE_NODE_OPTIONS } from '../../harness/operator-bundle.ts';
import { API_VERSION, GROUP, SANDBOX, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import { kwokNodeName, type LocalCluster } from '@sandbox-operator/local-cluster';

export function clients(cluster: LocalCluster) {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  // The sessions' writes (references, their turns) as a user of their own: admin is the operator here, and
  // the operator bounds refuse it any reference write but a delete.
  const as = new KubeConfig();
  as.loadFromString(kc.exportConfig());
  as.users = as.users.map((user) => ({ ...user, impersonateUser: SANDBOX_DELETER }));
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    user: as.makeApiClient(CustomObjectsApi),
  };
}
export type Clients = ReturnType<typeof clients>;

/** kubectl's flag for the sessions' user (clients().user). */
export const AS_USER = `--as=${SANDBOX_DELETER}`;

/**
 * The bench runs the operator as admin: let admin delete sandbox pods, and give the sessions' user
 * (clients().user) its rights.
 */
export async function allowAdmin({ core, kc }: Clients): Promise<void> {
  await setOperatorUsers(core, ['admin']);
  await sandboxDeleter(kc);
}

export async function createMany<T>(
  items: readonly T[],
  create: (item: T) => Promise<unknown>,
  concurrency = 32,
): Promise<void> {
  const limit = pLimit(concurrency);
  await Promise.all(items.map((item) => limit(() => create(item))));
}

/** Pods on a kwok node run; pods without a node stay Pending (nothing schedules them). */
export function sandboxBody(namespace: string, name: string, replicas: number, onNode = true) {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX.kind,
    metadata: { name, namespace },
    spec: {
      worktree: 'wt-1',
      replicas,
      podTemplate: {
        spec: {
          ...(onNode ? { nodeName: kwokNodeName(0) } : {}),
          containers: [{ name: 'agent', image: 'agent:1' }],
        },
      },
    },
  };
}

export function referenceBody(namespace: string, sandbox: string, i: number, worktree: string) {
  return {
    apiVersion: API_VERSION,
    kind: SESSION_REFERENCE.kind,
    metadata: { name: `${sandbox}-r${i}`, namespace },
    spec: {
      sandbox,
      session: `workspace_${sandbox}_${i}`,
      worktree,
      route: `shared-control-v1/${sandbox}/${i}`,
      role: 'Root',
      state: i % 3 === 0 ? 'Detached' : 'Attached',
    },
  };
}

// As the sessions' user: where the operator runs as admin, the bounds let admin create only a warm pool's or
// a sandbox claim's Sandboxes (issue 28).
export const createSandbox = ({ user }: Clients, body: ReturnType<typeof sandboxBody>) =>
  user.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: body.metadata.namespace,
    plural: SANDBOX.plural,
    body,
  });
export const createReference = ({ user }: Clients, body: ReturnType<typeof referenceBody>) =>
  user.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: body.metadata.namespace,
    plural: SESSION_REFERENCE.plural,
    body,
  });

export type Startup = {
  /** Spawn to the "caches synced" log line: modules loaded, identity checked, every watch listed. */
  readonly syncedMs: number;
  /** Spawn to the "reconciling sandboxes" log line: workers started, every cached sandbox queued. */
  readonly reconcilingMs: number;
};
export type OperatorProcess = {
  child: ChildProcess;
  /** From the operator's own log lines; rejects if it exits first. */
  startup: Promise<Startup>;
  stop(): Promise<void>;
};

let bundled: Promise<string> | undefined;
/** The operator bundled as the image runs it (or BENCH_OPERATOR_MAIN, e.g. another branch's build). */
export function operatorEntry(): Promise<string> {
  const given = process.env['BENCH_OPERATOR_MAIN'];
  bundled ??= given ? Promise.resolve(resolve(given)) : buildOperatorBundle('bench-bundle');
  return bundled;
}

export async function startOperator(
  cluster: LocalCluster,
  namespace: string | undefined,
  workers: number,
  extra: string[] = [],
  {
    kubeconfigPath = cluster.kubeconfigPath,
    entry,
  }: {
    /** Another way to the API server (the latency proxy); default: the cluster's admin kubeconfig. */
    readonly kubeconfigPath?: string | undefined;
    /** Another build (a baseline); default: operatorEntry(). */
    readonly entry?: string | undefined;
  } = {},
): Promise<OperatorProcess> {
  const probeAt = extra.indexOf('--probe-bind');
  const bind = probeAt >= 0 ? (extra[probeAt + 1] ?? '127.0.0.1:0') : '127.0.0.1:0';
  // /metrics on the probe listener (one bind), so the bench reads both from one port.
  const probe = [...(probeAt >= 0 ? [] : ['--probe-bind', bind]), '--metrics-bind', bind];
  const args = [
    ...IMAGE_NODE_OPTIONS,
    entry ?? (await operatorEntry()),
    '--workers',
    String(workers),
    '--leader-elect',
    'false',
    // info: the start-up lines are timed; the rest is read and dropped.
    '--log-level',
    'info',
    ...probe,
    ...extra,
  ];
  if (namespace) args.push('--namespace', namespace);
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, KUBECONFIG: kubeconfigPath, SANDBOX_OPERATOR_LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const startup = startupOf(child, spawnedAt);
  // Benches that do not time the start-up never await it; an early exit still fails the bench that waits.
  startup.catch(() => undefined);
  return { child, startup, stop: () => stopProcess(child) };
}

function startupOf(child: ChildProcess, spawnedAt: number): Promise<Startup> {
  return new Promise((resolveStartup, reject) => {
    let syncedMs: number | undefined;
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (syncedMs === undefined && line.includes('"msg":"caches synced"'))
        syncedMs = performance.now() - spawnedAt;
      else if (syncedMs !== undefined && line.includes('"msg":"reconciling sandboxes"'))
        resolveStartup({ syncedMs, reconcilingMs: performance.now() - spawnedAt });
      else if (line.includes('"level":50') || line.includes('"level":60')) process.stderr.write(`${line}\n`);
    });
    child.once('exit', (code) =>
      reject(new Error(`the operator exited (${String(code)}) before it reconciled`)),
    );
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** apiserver_request_total by verb and resource (from the API server's own /metrics), summed over codes. */
export async function apiserverRequests(cluster: LocalCluster): Promise<Map<string, number>> {
  const result = await cluster.kubectl(['get', '--raw', '/metrics']);
  if (result.exitCode !== 0) throw new Error(`kubectl get --raw /metrics: ${result.stderr}`);
  const totals = new Map<string, number>();
  for (const line of result.stdout.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = new Map(
      [...line.matchAll(/(\w+)="([^"]*)"/g)].map((m): [string, string] => [m[1] ?? '', m[2] ?? '']),
    );
    const sub = labels.get('subresource');
    const key = `${labels.get('verb') ?? '?'} ${labels.get('resource') ?? '?'}${sub ? `/${sub}` : ''}`;
    totals.set(key, (totals.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return totals;
}

export function requestDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [key, value] of after) {
    const change = value - (before.get(key) ?? 0);
    if (change > 0) delta.set(key, change);
  }
  return delta;
}

/** Polls `check` every 250 ms until it holds, or fails naming what it waited for. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
