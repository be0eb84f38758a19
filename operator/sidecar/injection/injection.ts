/**
 * What the controller adds to a sandbox pod when `spec.shellReaper.enabled` (pure: it returns plain pod
 * spec fragments to merge). The privilege choice lives here, once (docs/sidecar.md "Privilege"):
 *
 * - The sidecar runs as root with every capability dropped but KILL (signal other UIDs' processes),
 *   SYS_PTRACE and DAC_READ_SEARCH (both are needed to read another UID's /proc/<pid>/environ, where the
 *   marker lives — checked on Linux 6.18: either one alone gets EACCES). Capabilities added to a non-root
 *   container are not effective in Kubernetes (kubernetes#56374), so "same UID + caps" is not an option.
 * - The agent must run as a non-root UID without SYS_PTRACE: then it can neither signal the sidecar nor
 *   read its /proc/<pid>/root or environ (the ptrace access check), so the sidecar's token is out of reach.
 * - The pod does not automount a service-account token; only the sidecar mounts a projected one.
 * - The agent mounts the socket volume read-only (connect(2) works on a read-only mount; it cannot
 *   replace the socket) and the output volume read-write; the journal volume is the sidecar's alone.
 */
import { CONFIG_ENV } from '../contract/config.ts';

export const REAPER_CONTAINER = 'shell-reaper';
export const REAPER_PATHS = {
  socketDir: '/var/run/sandbox-reaper',
  socket: '/var/run/sandbox-reaper/reaper.sock',
  outputDir: '/var/run/sandbox-reaper-output',
  stateDir: '/var/lib/sandbox-reaper',
  token: '/var/run/secrets/kubernetes.io/serviceaccount',
} as const;
export const REAPER_VOLUMES = {
  socket: 'sandbox-reaper-socket',
  output: 'sandbox-reaper-output',
  state: 'sandbox-reaper-state',
  token: 'sandbox-reaper-token',
  tmp: 'sandbox-reaper-tmp',
} as const;

export interface ReaperInjectionInput {
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
  /** Set on the pod spec: a shared PID namespace, no token for the agent containers. */
  readonly podSpec: PodFragment;
  readonly container: PodFragment;
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

export function reaperInjection(input: ReaperInjectionInput): ReaperInjection {
  return {
    podSpec: { shareProcessNamespace: true, automountServiceAccountToken: false },
    container: {
      name: REAPER_CONTAINER,
      image: input.image,
      command: [...input.command],
      env: [
        fieldEnv(CONFIG_ENV.namespace, 'metadata.namespace'),
        fieldEnv(CONFIG_ENV.podName, 'metadata.name'),
        { name: CONFIG_ENV.sandbox, value: input.sandbox },
        { name: CONFIG_ENV.graceSeconds, value: String(input.gracePeriodSeconds) },
        { name: CONFIG_ENV.socket, value: REAPER_PATHS.socket },
        { name: CONFIG_ENV.outputDir, value: REAPER_PATHS.outputDir },
        { name: CONFIG_ENV.stateDir, value: REAPER_PATHS.stateDir },
      ],
      securityContext: {
        runAsUser: 0,
        runAsNonRoot: false,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        privileged: false,
        capabilities: { drop: ['ALL'], add: ['KILL', 'SYS_PTRACE', 'DAC_READ_SEARCH'] },
        seccompProfile: { type: 'RuntimeDefault' },
      },
      resources: { requests: { cpu: '20m', memory: '64Mi' }, limits: { memory: '256Mi' } },
      volumeMounts: [
        { name: REAPER_VOLUMES.socket, mountPath: REAPER_PATHS.socketDir },
        { name: REAPER_VOLUMES.output, mountPath: REAPER_PATHS.outputDir, readOnly: true },
        { name: REAPER_VOLUMES.state, mountPath: REAPER_PATHS.stateDir },
        { name: REAPER_VOLUMES.token, mountPath: REAPER_PATHS.token, readOnly: true },
        // The root filesystem is read-only; tsx keeps its transform cache in /tmp.
        { name: REAPER_VOLUMES.tmp, mountPath: '/tmp' },
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
