/**
 * What the controller adds to a sandbox pod when `spec.shellReaper.enabled` (pure: it returns plain pod
 * spec fragments to merge). The privilege choice lives here, once (docs/sidecar.md "Privilege modes"):
 *
 * - `SameUser` (runs under the `restricted` PodSecurity level): the sidecar runs as the agent's UID and
 *   GID with every capability dropped. The kernel lets a process signal, and read /proc/<pid>/environ of,
 *   processes of its own UID, which is all the reaper needs when the agent never changes UID. The price:
 *   the agent can also signal the sidecar and read its files, token included — so the token may do only
 *   what the sidecar's narrowed RBAC and admission policy allow.
 * - `Privileged` (needs the `privileged` level): root with every capability dropped but KILL (signal other
 *   UIDs), SYS_PTRACE and DAC_OVERRIDE (read another UID's environ; either alone gets EACCES), for agents
 *   that change UID (sudo, setpriv). `baseline` refuses SYS_PTRACE and `restricted` refuses root, so no
 *   lower level admits it. Capabilities added to a non-root container are not effective in
 *   Kubernetes (kubernetes#56374), so "agent UID + caps" is not an option.
 *
 * Either way the sidecar is a native sidecar (an init container with `restartPolicy: Always` and a
 * startup probe on its socket), so the kubelet starts the agent containers only once it listens and no
 * shell can start before it. The agent mounts the socket volume read-only (connect(2) works on a read-only
 * mount) and the output volume read-write; the sidecar mounts the output volume read-write too, so it can
 * bound and remove the files it tails.
 */
import { REAPER_CONTAINER, REAPER_VOLUMES } from '../../api/names.ts';
import { REAPER_PATHS, REAPER_PROBE_COMMAND } from '../../api/reaper-shape.ts';
import { CONFIG_ENV } from '../contract/config.ts';

export { REAPER_CONTAINER, REAPER_PATHS, REAPER_VOLUMES };

export type ReaperMode =
  | {
      /** Runs under PodSecurity `restricted`: the sidecar is the agent's own user. */
      readonly kind: 'SameUser';
      readonly uid: number;
      readonly gid: number;
    }
  | {
      /** Needs PodSecurity `privileged`: root with KILL, SYS_PTRACE, DAC_OVERRIDE and CHOWN. */
      readonly kind: 'Privileged';
      /** The agent's user and group when known: the socket is handed to them. */
      readonly agent?: { readonly uid: number; readonly gid: number };
    };

export interface ReaperInjectionInput {
  readonly mode: ReaperMode;
  /** The operator's image: the sidecar is the same image with its own command. */
  readonly image: string;
  /** The image's command for the sidecar, e.g. ['node', '--import', 'tsx', 'operator/cli/sidecar.ts']. */
  readonly command: readonly string[];
  readonly sandbox: string;
  /** From `spec.shellReaper.gracePeriodSeconds`. */
  readonly gracePeriodSeconds: number;
}

type Json = string | number | boolean | null | readonly Json[] | { readonly [key: string]: Json };
export type PodFragment = { readonly [key: string]: Json };

export interface ReaperInjection {
  /** Set on the pod spec: a shared PID namespace (and, when the pod keeps no account of its own, no token for the agent). */
  readonly podSpec: PodFragment;
  /** The native sidecar: prepend it to the pod's init containers. */
  readonly initContainer: PodFragment;
  readonly volumes: readonly PodFragment[];
  /** Added to every agent container: the socket read-only, the output directory read-write. */
  readonly agentVolumeMounts: readonly PodFragment[];
  /** Added to every agent container, so spawned shells know where to register and write output. */
  readonly agentEnv: readonly PodFragment[];
}

const fieldEnv = (name: string, fieldPath: string): PodFragment => ({
  name,
  valueFrom: { fieldRef: { fieldPath } },
});

const securityContextOf = (mode: ReaperMode): PodFragment => {
  const common = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    privileged: false,
    seccompProfile: { type: 'RuntimeDefault' },
  };
  return mode.kind === 'SameUser'
    ? {
        ...common,
        runAsUser: mode.uid,
        runAsGroup: mode.gid,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      }
    : {
        ...common,
        runAsUser: 0,
        runAsGroup: 0,
        runAsNonRoot: false,
        capabilities: { drop: ['ALL'], add: [...PRIVILEGED_CAPABILITIES] },
      };
};

/**
 * What the Privileged mode's root sidecar keeps of root's capabilities (docs/sidecar.md, "Privilege modes"):
 * KILL to signal other users, SYS_PTRACE and DAC_OVERRIDE to read their environ (a 0400 file of its
 * owner), CHOWN to hand the socket to the agent's user (without it the chown fails with EPERM and the
 * sidecar never listens). Never DAC_READ_SEARCH (issue 26 #2): it alone admits open_by_handle_at, by the
 * kernel's check and by the runtime's default seccomp profile, which opens host files by handle ("Shocker");
 * DAC_OVERRIDE passes open(2)'s permission checks (writes too: files of the pod's processes, which SYS_PTRACE
 * over those processes already puts in the sidecar's hands) and opens nothing by handle.
 */
export const PRIVILEGED_CAPABILITIES = ['KILL', 'SYS_PTRACE', 'DAC_OVERRIDE', 'CHOWN'] as const;

/** The socket belongs to the agent: its owner in SameUser mode, chown'd to it by a root sidecar. */
const socketEnv = (mode: ReaperMode): PodFragment[] => {
  if (mode.kind === 'SameUser') return [{ name: CONFIG_ENV.socketMode, value: '0600' }];
  if (mode.agent === undefined) return [{ name: CONFIG_ENV.socketMode, value: '0666' }];
  // The agent's user owns it; root's group keeps it reachable by the sidecar's own startup probe (this root)
  // without leaning on DAC_OVERRIDE, which pods made before it replaced DAC_READ_SEARCH do not hold.
  return [
    { name: CONFIG_ENV.socketOwner, value: `${mode.agent.uid}:0` },
    { name: CONFIG_ENV.socketMode, value: '0660' },
  ];
};

export function reaperInjection(input: ReaperInjectionInput): ReaperInjection {
  return {
    podSpec: { shareProcessNamespace: true, automountServiceAccountToken: false },
    initContainer: {
      name: REAPER_CONTAINER,
      image: input.image,
      command: [...input.command],
      restartPolicy: 'Always',
      startupProbe: {
        exec: { command: [...REAPER_PROBE_COMMAND] },
        periodSeconds: 1,
        failureThreshold: 120,
      },
      env: [
        fieldEnv(CONFIG_ENV.namespace, 'metadata.namespace'),
        fieldEnv(CONFIG_ENV.podName, 'metadata.name'),
        { name: CONFIG_ENV.sandbox, value: input.sandbox },
        { name: CONFIG_ENV.graceSeconds, value: String(input.gracePeriodSeconds) },
        { name: CONFIG_ENV.socket, value: REAPER_PATHS.socket },
        { name: CONFIG_ENV.outputDir, value: REAPER_PATHS.outputDir },
        { name: CONFIG_ENV.stateDir, value: REAPER_PATHS.stateDir },
        { name: CONFIG_ENV.mode, value: input.mode.kind },
        ...socketEnv(input.mode),
      ],
      securityContext: securityContextOf(input.mode),
      resources: { requests: { cpu: '20m', memory: '64Mi' }, limits: { memory: '256Mi' } },
      volumeMounts: [
        { name: REAPER_VOLUMES.socket, mountPath: REAPER_PATHS.socketDir },
        // Read-write: the sidecar truncates an output file at its cap and removes a retired shell's file.
        { name: REAPER_VOLUMES.output, mountPath: REAPER_PATHS.outputDir },
        { name: REAPER_VOLUMES.state, mountPath: REAPER_PATHS.stateDir },
        { name: REAPER_VOLUMES.token, mountPath: REAPER_PATHS.token, readOnly: true },
        // The root filesystem is read-only; tsx keeps its transform cache in /tmp.
        { name: REAPER_VOLUMES.tmp, mountPath: REAPER_PATHS.tmp },
      ],
    },
    volumes: [
      { name: REAPER_VOLUMES.socket, emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
      { name: REAPER_VOLUMES.output, emptyDir: { sizeLimit: '1Gi' } },
      { name: REAPER_VOLUMES.state, emptyDir: { sizeLimit: '64Mi' } },
      { name: REAPER_VOLUMES.tmp, emptyDir: { sizeLimit: '256Mi' } },
      {
        name: REAPER_VOLUMES.token,
        projected: {
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            {
              downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] },
            },
          ],
        },
      },
    ],
    agentVolumeMounts: [
      { name: REAPER_VOLUMES.socket, mountPath: REAPER_PATHS.socketDir, readOnly: true },
      { name: REAPER_VOLUMES.output, mountPath: REAPER_PATHS.outputDir },
    ],
    agentEnv: [
      { name: CONFIG_ENV.socket, value: REAPER_PATHS.socket },
      { name: CONFIG_ENV.outputDir, value: REAPER_PATHS.outputDir },
    ],
  };
}
