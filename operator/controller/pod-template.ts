/**
 * The sandbox pod built from a Sandbox: its template, plus what protection needs from creation on — the
 * exclusivity finalizer, the sandbox labels, and a controller owner reference — and, when asked for, the shell
 * reaper sidecar. Pure.
 */
import type { V1Container, V1Pod, V1Volume } from '@kubernetes/client-node';
import { API_VERSION, EXCLUSIVITY_FINALIZER, LABELS, MANAGED_BY, SANDBOX } from '../api/names.ts';
import type { Sandbox } from '../api/objects.ts';

export type SidecarSettings = {
  /** The operator's own image: the sidecar is the same image with another command. */
  readonly image: string;
  readonly serviceAccountName: string;
};

export const REAPER_CONTAINER = 'shell-reaper';
export const REAPER_VOLUME = 'shell-reaper';
export const REAPER_MOUNT = '/var/run/sandbox-reaper';

export const podName = (sandbox: string, ordinal: number) => `${sandbox}-${ordinal}`;

export function sandboxPod(sandbox: Sandbox, ordinal: number, sidecar: SidecarSettings): V1Pod {
  const { metadata, spec } = sandbox;
  const template = spec.podTemplate;
  const podSpec = structuredClone(template.spec) as unknown as NonNullable<V1Pod['spec']>;
  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(metadata.name, ordinal),
      namespace: metadata.namespace,
      labels: {
        ...template.metadata?.labels,
        [LABELS.sandbox]: metadata.name,
        [LABELS.podIndex]: String(ordinal),
        [LABELS.managedBy]: MANAGED_BY,
      },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      finalizers: [EXCLUSIVITY_FINALIZER],
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: SANDBOX.kind,
          name: metadata.name,
          uid: metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: podSpec,
  };
  if (spec.shellReaper.enabled) injectReaper(pod, sandbox, sidecar);
  return pod;
}

/**
 * The reaper shares the pod's process namespace and an emptyDir for its socket. It runs as root with only
 * CAP_KILL and CAP_SYS_PTRACE (signals and /proc environ of the agent's processes); its API token is mounted
 * into its own container only, and the pod does not automount one into the agent containers.
 */
function injectReaper(pod: V1Pod, sandbox: Sandbox, sidecar: SidecarSettings): void {
  const spec = pod.spec;
  if (!spec) return;
  spec.shareProcessNamespace = true;
  spec.automountServiceAccountToken = false;
  spec.serviceAccountName = sidecar.serviceAccountName;
  const socketMount = { name: REAPER_VOLUME, mountPath: REAPER_MOUNT };
  spec.containers = spec.containers.map((container) => ({
    ...container,
    volumeMounts: [...(container.volumeMounts ?? []), socketMount],
  }));
  const volumes: V1Volume[] = [
    { name: REAPER_VOLUME, emptyDir: {} },
    {
      name: `${REAPER_CONTAINER}-token`,
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    },
  ];
  spec.volumes = [...(spec.volumes ?? []), ...volumes];
  const reaper: V1Container = {
    name: REAPER_CONTAINER,
    image: sidecar.image,
    command: ['node', 'dist/operator/cli/sidecar.js'],
    env: [
      { name: 'SANDBOX_NAME', value: sandbox.metadata.name },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'SHELL_REAPER_GRACE_SECONDS', value: String(sandbox.spec.shellReaper.gracePeriodSeconds) },
      { name: 'SHELL_REAPER_SOCKET', value: `${REAPER_MOUNT}/reaper.sock` },
    ],
    volumeMounts: [
      socketMount,
      {
        name: `${REAPER_CONTAINER}-token`,
        mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
        readOnly: true,
      },
    ],
    securityContext: {
      runAsUser: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: ['KILL', 'SYS_PTRACE'] },
    },
    resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
  };
  spec.containers = [...spec.containers, reaper];
}
