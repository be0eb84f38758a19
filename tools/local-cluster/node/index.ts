// One real node beside the kwok nodes: containerd (own config, root and socket under the run's
// temporary directory), the CNI bridge, kubelet and kube-scheduler, with the locally built pause and
// shell images imported. Everything it starts is removed by its teardown script (teardown.ts).
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ComponentContext } from '../components.ts';
import { LocalClusterError } from '../errors.ts';
import { ensureExampleStandIn } from '../images/example-stand-in.ts';
import { ensurePauseImage, ensureShellImage } from '../images/node-images.ts';
import { poll } from '../net.ts';
import { registry } from '../process-registry.ts';
import type { ManagedProcess } from '../processes.ts';
import type { BuildReporter } from '../run-step.ts';
import { createNodeCgroups, nodeCgroupPids } from './cgroups.ts';
import { importImage, startContainerd } from './containerd.ts';
import { REAL_NODE_NAME, startKubelet, startScheduler } from './kubelet.ts';
import { loopbackApiPolicy } from './loopback-api.ts';
import type { KubectlOptions, KubectlResult } from '../kubectl.ts';
import { runTeardownSync, writeTeardownScript, type NodeResources } from './teardown.ts';

export { REAL_NODE_NAME, NODE_KIND_LABEL, REAL_NODE_TAINT } from './kubelet.ts';
export { realNodeVerdict, realNodeRequired, type NodeVerdict } from './prerequisites.ts';

export interface RealNodeOptions {
  readonly kubeletBinary: string;
  readonly schedulerBinary: string;
  readonly kubeconfigPath: string;
  readonly kc: KubeConfig;
  readonly cacheRoot: string;
  readonly report: BuildReporter;
  /** Taint the node so only pods that tolerate REAL_NODE_TAINT land on it (the test harness). */
  readonly taint: boolean;
  readonly apiPort: number;
  readonly kubectl: (args: readonly string[], options?: KubectlOptions) => Promise<KubectlResult>;
}

export interface RealNode {
  readonly name: string;
  /**
   * Images present on the node (imagePullPolicy IfNotPresent or Never); `exampleStandIn` is the stand-in imported
   * under the name of the image the examples run (images/example-stand-in.ts).
   */
  readonly images: { readonly pause: string; readonly shell: string; readonly exampleStandIn: string };
  readonly resources: NodeResources;
  readonly containerdSocket: string;
  /** Imports a docker-archive tar into the node's containerd. */
  importImage(archive: string): Promise<void>;
  /** Pids of every process in the node's cgroups (containerd, shims, containers, kubelet). */
  pids(): number[];
  readonly processes: readonly ManagedProcess[];
  stop(): Promise<void>;
}

export async function startRealNode(ctx: ComponentContext, options: RealNodeOptions): Promise<RealNode> {
  const id = randomBytes(3).toString('hex');
  const resources: NodeResources = {
    cgroupName: `sandbox-operator-${id}`,
    dir: join(ctx.tempDir, 'node'),
    bridge: `sbxop${id}`,
  };
  const script = join(ctx.tempDir, 'node-teardown.sh');
  writeTeardownScript(script, resources);
  registry.trackTeardown(script, ctx.stateDir);
  const processes: ManagedProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const proc of [...processes].reverse()) await proc.stop(5_000);
    runTeardownSync(script);
    registry.forgetTeardown(script);
  };
  try {
    createNodeCgroups(resources.cgroupName);
    const [pause, shell, exampleStandIn] = [
      await ensurePauseImage(options.cacheRoot, options.report),
      await ensureShellImage(options.cacheRoot, options.report),
      await ensureExampleStandIn(options.cacheRoot, options.report),
    ];
    const containerd = await startContainerd(ctx, resources.dir, resources.cgroupName, {
      sandboxImage: pause.tag,
      bridge: resources.bridge,
      podSubnet: '10.88.0.0/24',
      network: resources.cgroupName,
    });
    processes.push(containerd.process);
    for (const image of [pause, shell, exampleStandIn]) await importImage(containerd.paths, image.archive);
    processes.push(startScheduler(ctx, options.schedulerBinary, options.kubeconfigPath));
    const kubelet = await startKubelet(ctx, resources.dir, options.kubeletBinary, {
      kubeconfig: options.kubeconfigPath,
      containerdSocket: containerd.paths.socket,
      cgroupName: resources.cgroupName,
      taint: options.taint,
    });
    processes.push(kubelet);
    await waitReady(options.kc, kubelet);
    const policy = await options.kubectl(['apply', '--server-side', '-f', '-'], {
      input: loopbackApiPolicy(options.apiPort),
    });
    if (policy.exitCode !== 0)
      throw new LocalClusterError('not-ready', 'the loopback API policy was refused', {
        subject: 'real node',
        step: 'apply MutatingAdmissionPolicy',
        outputTail: policy.stderr,
      });
    return {
      name: REAL_NODE_NAME,
      images: { pause: pause.tag, shell: shell.tag, exampleStandIn: exampleStandIn.tag },
      resources,
      containerdSocket: containerd.paths.socket,
      importImage: (archive) => importImage(containerd.paths, archive),
      pids: () => nodeCgroupPids(resources.cgroupName),
      processes,
      stop,
    };
  } catch (error: unknown) {
    await stop();
    throw error;
  }
}

async function waitReady(kc: KubeConfig, kubelet: ManagedProcess): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  let last = 'not registered';
  const ready = await poll(
    async () => {
      try {
        const node = await core.readNodeStatus({ name: REAL_NODE_NAME });
        const condition = node.status?.conditions?.find((c) => c.type === 'Ready');
        last = `Ready=${condition?.status ?? 'unknown'}: ${condition?.message ?? ''}`;
        return condition?.status === 'True' ? true : undefined;
      } catch {
        return undefined; // not registered yet
      }
    },
    { timeoutMs: 90_000, intervalMs: 500, abortIf: () => (kubelet.running() ? null : 'kubelet exited') },
  );
  if (!ready.ok)
    throw new LocalClusterError('not-ready', `kubelet: node ${REAL_NODE_NAME}: ${ready.reason}; ${last}`, {
      subject: 'kubelet',
      step: 'wait for the node to be Ready',
      outputTail: await kubelet.logTail(25),
      hint: `Logs: ${kubelet.logPath} and containerd.log beside it.`,
    });
}
