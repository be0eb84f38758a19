// containerd for the real node: its own config, root, state and socket under the node's directory,
// the CNI bridge config, and the local images imported from their tars (there is no registry).
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ComponentContext } from '../components.ts';
import { LocalClusterError } from '../errors.ts';
import { poll } from '../net.ts';
import { startProcess, type ManagedProcess } from '../processes.ts';
import { adoptIntoNodeCgroups } from './cgroups.ts';
import { CNI_BIN_DIR } from './prerequisites.ts';

const run = promisify(execFile);

export interface ContainerdPaths {
  readonly dir: string;
  readonly socket: string;
  readonly config: string;
  readonly cniConfDir: string;
}

export function containerdPaths(nodeDir: string): ContainerdPaths {
  const dir = join(nodeDir, 'containerd');
  return {
    dir,
    socket: join(dir, 'containerd.sock'),
    config: join(dir, 'config.toml'),
    cniConfDir: join(nodeDir, 'cni', 'net.d'),
  };
}

export interface ContainerdSettings {
  readonly sandboxImage: string;
  readonly bridge: string;
  /** The pods' subnet on the bridge, e.g. 10.88.0.0/24: no gateway, no masquerade, no route out. */
  readonly podSubnet: string;
  /** The CNI network's name; libcni caches results under /var/lib/cni/results/<name>-*. */
  readonly network: string;
}

/** config.toml (pure). Why each setting: docs/real-node.md. */
export function containerdConfig(paths: ContainerdPaths, settings: ContainerdSettings): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${join(paths.dir, 'root')}"
state = "${join(paths.dir, 'state')}"
[grpc]
  address = "${paths.socket}"
[ttrpc]
  address = "${paths.socket}.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(paths.dir, 'opt')}"
[${cri}]
  sandbox_image = "${settings.sandboxImage}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [${cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [${cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [${cri}.containerd.runtimes.runc.options]
        SystemdCgroup = false
  [${cri}.cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${paths.cniConfDir}"
    max_conf_num = 1
`;
}

/** The pods' network (pure): a bridge with no address on the host, so pods reach only each other. */
export function cniConfig(nodeDir: string, settings: ContainerdSettings): string {
  return JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: settings.network,
      plugins: [
        {
          type: 'bridge',
          bridge: settings.bridge,
          isGateway: false,
          ipMasq: false,
          hairpinMode: false,
          ipam: {
            type: 'host-local',
            dataDir: join(nodeDir, 'cni', 'ipam'),
            ranges: [[{ subnet: settings.podSubnet }]],
          },
        },
      ],
    },
    null,
    2,
  );
}

export async function startContainerd(
  ctx: ComponentContext,
  nodeDir: string,
  cgroupName: string,
  settings: ContainerdSettings,
): Promise<{ process: ManagedProcess; paths: ContainerdPaths }> {
  const paths = containerdPaths(nodeDir);
  await mkdir(paths.dir, { recursive: true });
  await mkdir(paths.cniConfDir, { recursive: true });
  await writeFile(paths.config, containerdConfig(paths, settings));
  await writeFile(join(paths.cniConfDir, '10-sandbox-operator.conflist'), cniConfig(nodeDir, settings));
  const proc = startProcess({
    name: 'containerd',
    command: 'containerd',
    args: ['--config', paths.config],
    // Registry traffic (an image that was not imported) goes to a closed loopback port, never out.
    env: {
      ...process.env,
      HTTPS_PROXY: 'http://127.0.0.1:9',
      HTTP_PROXY: 'http://127.0.0.1:9',
      NO_PROXY: '',
    },
    logPath: join(ctx.tempDir, 'containerd.log'),
    stateDir: ctx.stateDir,
  });
  adoptIntoNodeCgroups(cgroupName, proc.pid);
  const ready = await poll(
    async () => {
      try {
        await ctr(paths, ['version']);
        return true;
      } catch {
        return undefined; // not serving yet; poll again
      }
    },
    { timeoutMs: 30_000, intervalMs: 200, abortIf: () => (proc.running() ? null : 'containerd exited') },
  );
  if (!ready.ok) {
    await proc.stop(2_000);
    throw new LocalClusterError('not-ready', `containerd: ${ready.reason} (log: ${proc.logPath})`, {
      subject: 'containerd',
      step: 'wait for its socket',
      outputTail: await proc.logTail(25),
    });
  }
  return { process: proc, paths };
}

export async function ctr(paths: ContainerdPaths, args: readonly string[]): Promise<string> {
  const { stdout } = await run('ctr', ['--address', paths.socket, '--namespace', 'k8s.io', ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

export async function importImage(paths: ContainerdPaths, archive: string): Promise<void> {
  try {
    await ctr(paths, ['images', 'import', archive]);
  } catch (error: unknown) {
    throw new LocalClusterError(
      'process-failed',
      `containerd: ctr images import ${archive} failed`,
      { subject: 'containerd', step: 'import image', outputTail: stderrOf(error) },
      { cause: error },
    );
  }
}

function stderrOf(error: unknown): string {
  const stderr = (error as { stderr?: unknown }).stderr;
  return typeof stderr === 'string' ? stderr : '';
}
