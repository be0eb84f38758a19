// Whether this machine can run a real node, and if not, why, in one line. The real node needs root
// (cgroups, mounts, network namespaces), Debian's containerd, runc and CNI plugins, gcc (the pause
// image) and busybox-static (the shell image): `.ci/run` installs them where they are missing.
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const CNI_BIN_DIR = '/usr/lib/cni';
const COMMANDS = ['containerd', 'containerd-shim-runc-v2', 'runc', 'ctr', 'gcc', 'tar', 'ip', 'umount'];
const CNI_PLUGINS = ['bridge', 'host-local', 'loopback'];
export const NODE_PACKAGES =
  'containerd runc containernetworking-plugins iptables gcc libc6-dev busybox-static';

export type NodeVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  return (env['PATH'] ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false; // not in this directory; the next one may have it
    }
  });
}

/** `SANDBOX_OPERATOR_REAL_NODE=0` turns the node off; otherwise the machine decides. */
export function realNodeVerdict(env: NodeJS.ProcessEnv = process.env): NodeVerdict {
  if (env['SANDBOX_OPERATOR_REAL_NODE'] === '0') return { ok: false, reason: 'SANDBOX_OPERATOR_REAL_NODE=0' };
  if (process.platform !== 'linux') return { ok: false, reason: `needs Linux, not ${process.platform}` };
  if (process.getuid?.() !== 0)
    return { ok: false, reason: `needs root (uid ${String(process.getuid?.())})` };
  const missing = [
    ...COMMANDS.filter((command) => !onPath(command, env)),
    ...CNI_PLUGINS.filter((plugin) => !existsSync(join(CNI_BIN_DIR, plugin))).map(
      (p) => `${CNI_BIN_DIR}/${p}`,
    ),
    ...(existsSync('/bin/busybox') ? [] : ['/bin/busybox']),
  ];
  if (missing.length > 0)
    return {
      ok: false,
      reason: `missing ${missing.join(', ')} (apt-get install ${NODE_PACKAGES})`,
    };
  if (!existsSync('/sys/fs/cgroup')) return { ok: false, reason: 'no /sys/fs/cgroup' };
  return { ok: true };
}

/** `SANDBOX_OPERATOR_REAL_NODE=1` (CI): a node that cannot start is an error, not a skip. */
export function realNodeRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env['SANDBOX_OPERATOR_REAL_NODE'] === '1';
}
