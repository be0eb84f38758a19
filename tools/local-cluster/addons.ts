// Optional components started after the CRDs are installed: kube-controller-manager (garbage
// collector, namespace controller, and volumes: a hostPath provisioner behind a default StorageClass) and kwok
// (fake Nodes and pod lifecycle).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  CoreV1Api,
  StorageV1Api,
  type KubeConfig,
  type V1Node,
  type V1StorageClass,
} from '@kubernetes/client-node';
import type { ComponentContext } from './components.ts';
import { LocalClusterError } from './errors.ts';
import { poll } from './net.ts';
import { startProcess, type ManagedProcess } from './processes.ts';

export const KWOK_STAGES_FILE = fileURLToPath(new URL('./kwok-stages.yaml', import.meta.url));

async function notReady(proc: ManagedProcess, step: string, reason: string): Promise<LocalClusterError> {
  await proc.stop(2_000);
  return new LocalClusterError('not-ready', `${proc.name}: ${step}: ${reason} (log: ${proc.logPath})`, {
    subject: proc.name,
    step,
    outputTail: await proc.logTail(25),
  });
}

function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

export async function startControllerManager(
  ctx: ComponentContext,
  binary: string,
  kubeconfigPath: string,
  kc: KubeConfig,
  options: { readonly rootCaFile: string | null } = { rootCaFile: null },
): Promise<ManagedProcess> {
  // With a real node: kube-root-ca.crt for the pods' projected tokens, and Deployments that make pods
  // (the chart's operator).
  const publisher =
    options.rootCaFile === null
      ? ''
      : ',root-ca-certificate-publisher-controller,deployment-controller,replicaset-controller';
  const proc = startProcess({
    name: 'kube-controller-manager',
    command: binary,
    args: [
      `--kubeconfig=${kubeconfigPath}`,
      // GC rediscovers resources only every 30 s: the caller starts us after installing the CRDs.
      // clusterrole-aggregation: the built-in `edit` and `admin` roles are aggregated, empty without it (tests
      // take a tenant's part with `edit`).
      // The volume controllers bind claims (a sandbox's persistent workspace) and free them once unused; the
      // hostPath provisioner makes a volume per claim (a directory under /tmp/hostpath_pv, deleted with it) for
      // the default StorageClass installed below. Single-node and for development only, as kcm says.
      `--controllers=garbage-collector-controller,namespace-controller,disruption-controller,clusterrole-aggregation-controller,${VOLUME_CONTROLLERS}${publisher}`,
      '--enable-hostpath-provisioner',
      ...(options.rootCaFile === null ? [] : [`--root-ca-file=${options.rootCaFile}`]),
      '--leader-elect=false',
      '--secure-port=0',
      '--use-service-account-credentials=false',
    ],
    logPath: join(ctx.tempDir, 'kube-controller-manager.log'),
    stateDir: ctx.stateDir,
  });
  // Readiness is behaviour, not a port: an owned ConfigMap must be collected after its owner goes.
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = 'default';
  const owner = await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { generateName: 'local-cluster-gc-probe-' } },
  });
  const ownerName = owner.metadata?.name ?? '';
  const dependent = await core.createNamespacedConfigMap({
    namespace,
    body: {
      metadata: {
        generateName: `${ownerName}-dependent-`,
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: ownerName, uid: owner.metadata?.uid ?? '' },
        ],
      },
    },
  });
  await core.deleteNamespacedConfigMap({ name: ownerName, namespace });
  const dependentName = dependent.metadata?.name ?? '';
  const collected = await poll(
    async () => {
      try {
        await core.readNamespacedConfigMap({ name: dependentName, namespace });
        return undefined;
      } catch (error: unknown) {
        if (isNotFound(error)) return true;
        throw error;
      }
    },
    { timeoutMs: 60_000, intervalMs: 200, abortIf: () => (proc.running() ? null : 'exited') },
  );
  if (!collected.ok) throw await notReady(proc, 'garbage-collect a probe ConfigMap', collected.reason);
  await installStorageClass(kc);
  return proc;
}

const VOLUME_CONTROLLERS = [
  'persistentvolume-binder-controller',
  'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller',
].join(',');

/** The local cluster's default StorageClass: kube-controller-manager's hostPath provisioner. */
export const LOCAL_STORAGE_CLASS = 'local-hostpath';

/**
 * A claim with no class binds at once to a new hostPath volume (Immediate: kwok nodes and the real node alike,
 * since a hostPath volume has no node affinity). Its directory is root's, mode 0750: fsGroup does not apply to
 * hostPath volumes, so an agent that runs as another user needs an init step that hands it the directory
 * (docs/operations.md, "Persistent workspace").
 */
async function installStorageClass(kc: KubeConfig): Promise<void> {
  const body: V1StorageClass = {
    metadata: {
      name: LOCAL_STORAGE_CLASS,
      annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
    },
    provisioner: 'kubernetes.io/host-path',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  };
  try {
    await kc.makeApiClient(StorageV1Api).createStorageClass({ body });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }
}

export interface KwokOptions {
  readonly nodes: number;
}

export function kwokNodeName(index: number): string {
  return `kwok-node-${index}`;
}

export async function startKwok(
  ctx: ComponentContext,
  binary: string,
  kubeconfigPath: string,
  kc: KubeConfig,
  options: KwokOptions,
): Promise<ManagedProcess> {
  // kwok also reads ~/.kwok/kwok.yaml; a private HOME keeps a user's stages out of ours.
  const home = join(ctx.tempDir, 'kwok-home');
  await mkdir(home, { recursive: true });
  const proc = startProcess({
    name: 'kwok',
    command: binary,
    args: [
      `--kubeconfig=${kubeconfigPath}`,
      // Only its own nodes: a real node beside them runs its pods with its kubelet (node/index.ts).
      '--manage-nodes-with-label-selector=type=kwok',
      `--config=${KWOK_STAGES_FILE}`,
      '--node-ip=10.240.0.10',
      '--cidr=10.244.0.0/16',
    ],
    env: { ...process.env, HOME: home },
    logPath: join(ctx.tempDir, 'kwok.log'),
    stateDir: ctx.stateDir,
  });
  const core = kc.makeApiClient(CoreV1Api);
  const names = Array.from({ length: options.nodes }, (_, i) => kwokNodeName(i));
  for (const name of names) {
    const node: V1Node = {
      metadata: {
        name,
        labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', type: 'kwok' },
      },
      // Pods name a kwok node (spec.nodeName); a scheduler (with a real node) never places one here.
      spec: { taints: [{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }] },
    };
    await core.createNode({ body: node });
  }
  const ready = await poll(
    async () => {
      const nodes = await Promise.all(names.map((name) => core.readNodeStatus({ name })));
      const allReady = nodes.every((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return allReady ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200, abortIf: () => (proc.running() ? null : 'exited') },
  );
  if (!ready.ok) throw await notReady(proc, `wait for ${names.join(', ')} to be Ready`, ready.reason);
  return proc;
}
