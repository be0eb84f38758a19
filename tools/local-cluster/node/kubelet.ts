// kubelet and kube-scheduler for the real node. The node is named 127.0.0.1: kubelet refuses a
// loopback --node-ip but takes an IP given as --hostname-override as the node's InternalIP, so the API
// server reaches it (exec, logs) on loopback and nothing resolves a name through DNS.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ComponentContext } from '../components.ts';
import { freePort } from '../net.ts';
import { startProcess, type ManagedProcess } from '../processes.ts';
import { adoptIntoNodeCgroups } from './cgroups.ts';

export const REAL_NODE_NAME = '127.0.0.1';
/** Nodes of the local control plane say what they are; tests select the real one by it. */
export const NODE_KIND_LABEL = 'sandbox-operator.local/node';
/** Keeps pods that do not ask for the real node off it (tests: the kwok tier stays as it was). */
export const REAL_NODE_TAINT = {
  key: 'sandbox-operator.local/real-node',
  value: 'true',
  effect: 'NoSchedule',
} as const;

export interface KubeletSettings {
  readonly kubeconfig: string;
  readonly containerdSocket: string;
  readonly cgroupName: string;
  readonly taint: boolean;
}

/** Where this kubelet listens and keeps what is its own on the host. */
export interface KubeletPlaces {
  readonly port: number;
  readonly healthzPort: number;
  /** Its pod logs, in its node's directory: never the host's shared /var/log/pods (below). */
  readonly podLogsDir: string;
}

/** KubeletConfiguration (pure). Why each setting: docs/real-node.md. */
export function kubeletConfig(settings: KubeletSettings, places: KubeletPlaces): string {
  const { port, healthzPort, podLogsDir } = places;
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: '127.0.0.1',
    port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort,
    // The API server has no kubelet client certificate; the kubelet listens on loopback only.
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    containerRuntimeEndpoint: `unix://${settings.containerdSocket}`,
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${settings.cgroupName}`,
    failSwapOn: false,
    // Imported images have no registry to come back from: never collect them.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
    localStorageCapacityIsolation: false,
    maxPods: 250,
    resolvConf: '',
    serializeImagePulls: false,
    shutdownGracePeriod: '0s',
    registerWithTaints: settings.taint ? [REAL_NODE_TAINT] : [],
    nodeStatusUpdateFrequency: '4s',
    // Its container GC removes, once a minute, every pod log directory here whose pod it does not know: in a
    // directory shared with another local control plane's kubelet (a test's, or `npm start` beside the
    // tests'), each removed the other's, and those containers' logs read empty from then on.
    podLogsDir,
  });
}

export async function startKubelet(
  ctx: ComponentContext,
  nodeDir: string,
  binary: string,
  settings: KubeletSettings,
): Promise<ManagedProcess> {
  const dir = join(nodeDir, 'kubelet');
  await mkdir(join(dir, 'pki'), { recursive: true });
  const configPath = join(dir, 'config.yaml');
  const podLogsDir = join(dir, 'pod-logs');
  await mkdir(podLogsDir, { recursive: true });
  await writeFile(
    configPath,
    kubeletConfig(settings, { port: await freePort(), healthzPort: await freePort(), podLogsDir }),
  );
  const proc = startProcess({
    name: 'kubelet',
    command: binary,
    args: [
      `--config=${configPath}`,
      `--kubeconfig=${settings.kubeconfig}`,
      `--root-dir=${join(dir, 'root')}`,
      `--cert-dir=${join(dir, 'pki')}`,
      `--hostname-override=${REAL_NODE_NAME}`,
      `--node-labels=${NODE_KIND_LABEL}=real`,
      '--v=1',
    ],
    logPath: join(ctx.tempDir, 'kubelet.log'),
    stateDir: ctx.stateDir,
  });
  adoptIntoNodeCgroups(settings.cgroupName, proc.pid);
  return proc;
}

export function startScheduler(ctx: ComponentContext, binary: string, kubeconfig: string): ManagedProcess {
  return startProcess({
    name: 'kube-scheduler',
    command: binary,
    args: [`--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--secure-port=0', '--v=1'],
    logPath: join(ctx.tempDir, 'kube-scheduler.log'),
    stateDir: ctx.stateDir,
  });
}
