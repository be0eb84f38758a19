/** Bench plumbing on the local control plane: bulk object creation, the operator as a process, apiserver metrics. */
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import pLimit from 'p-limit';
import { setOperatorUsers } from '../../harness/admission.ts';
import { API_VERSION, GROUP, SANDBOX, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import { kwokNodeName, type LocalCluster } from '../../../operator/local-cluster/index.ts';

export function clients(cluster: LocalCluster) {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  return { kc, core: kc.makeApiClient(CoreV1Api), custom: kc.makeApiClient(CustomObjectsApi) };
}
export type Clients = ReturnType<typeof clients>;

/** The bench runs the operator as admin: let admin delete sandbox pods. */
export const allowAdmin = ({ core }: Clients) => setOperatorUsers(core, ['admin']);

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

export const createSandbox = ({ custom }: Clients, body: ReturnType<typeof sandboxBody>) =>
  custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: body.metadata.namespace,
    plural: SANDBOX.plural,
    body,
  });
export const createReference = ({ custom }: Clients, body: ReturnType<typeof referenceBody>) =>
  custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: body.metadata.namespace,
    plural: SESSION_REFERENCE.plural,
    body,
  });

export type OperatorProcess = { child: ChildProcess; stop(): Promise<void> };

export function startOperator(
  cluster: LocalCluster,
  namespace: string | undefined,
  workers: number,
  extra: string[] = [],
): OperatorProcess {
  const probeAt = extra.indexOf('--probe-bind');
  const bind = probeAt >= 0 ? (extra[probeAt + 1] ?? '127.0.0.1:0') : '127.0.0.1:0';
  // /metrics on the probe listener (one bind), so the bench reads both from one port.
  const probe = [...(probeAt >= 0 ? [] : ['--probe-bind', bind]), '--metrics-bind', bind];
  const args = [
    '--import',
    'tsx',
    'operator/cli/main.ts',
    '--workers',
    String(workers),
    '--leader-elect',
    'false',
    '--log-level',
    'warn',
    ...probe,
    ...extra,
  ];
  if (namespace) args.push('--namespace', namespace);
  const child = spawn(process.execPath, args, {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return {
    child,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
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
