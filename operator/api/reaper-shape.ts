/**
 * The shell reaper container's fixed shape, written once: the injection (operator/sidecar/injection) builds
 * the container from it, and the operator bounds (reaper-bounds.ts) refuse any other (issue 26 #1). The reaper
 * is the one container the bounds let be root with SYS_PTRACE, so a leaked operator token that could choose
 * its command, probe, mounts or environment (`NODE_OPTIONS=--import …`) would run its own code there.
 */
import { GROUP, REAPER_VOLUMES } from './names.ts';

/** The sidecar's command in the operator image, relative to the image's WORKDIR (see Dockerfile). */
export const REAPER_COMMAND = ['node', 'dist/bundle/sidecar.mjs'] as const;

export const REAPER_PATHS = {
  socketDir: '/var/run/sandbox-reaper',
  socket: '/var/run/sandbox-reaper/reaper.sock',
  outputDir: '/var/run/sandbox-reaper-output',
  stateDir: '/var/lib/sandbox-reaper',
  token: '/var/run/secrets/kubernetes.io/serviceaccount',
  /** The root filesystem is read-only; tsx keeps its transform cache here. */
  tmp: '/tmp',
} as const;

/** Where the reaper mounts each of its volumes, and nothing else. */
export const REAPER_MOUNT_PATHS: Readonly<Record<string, string>> = {
  [REAPER_VOLUMES.socket]: REAPER_PATHS.socketDir,
  [REAPER_VOLUMES.output]: REAPER_PATHS.outputDir,
  [REAPER_VOLUMES.state]: REAPER_PATHS.stateDir,
  [REAPER_VOLUMES.token]: REAPER_PATHS.token,
  [REAPER_VOLUMES.tmp]: REAPER_PATHS.tmp,
};

/** Connects to the socket: the kubelet starts the agent containers only once this succeeds. */
const PROBE_SCRIPT =
  "require('node:net').connect(process.argv[1]).on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))";
export const REAPER_PROBE_COMMAND = ['node', '-e', PROBE_SCRIPT, REAPER_PATHS.socket] as const;

/** Every variable the reaper is given starts so (its configuration: operator/sidecar/contract/config.ts). */
export const REAPER_ENV_PREFIX = 'SANDBOX_REAPER_';

/**
 * On a namespace, set by an administrator: the reaper's Privileged mode (root) is allowed there (value
 * `allowed`), with the PodSecurity `enforce` label `privileged`. Not a tenant's: the built-in `edit` and
 * `admin` roles cannot write namespaces.
 */
export const PRIVILEGED_REAPER_LABEL = `${GROUP}/shell-reaper-privileged`;
export const PRIVILEGED_REAPER_ALLOWED = 'allowed';
/** The namespace label PodSecurity admission enforces (https://kubernetes.io/docs/concepts/security/pod-security-admission/). */
export const POD_SECURITY_ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';
