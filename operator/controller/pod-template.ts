/**
 * The sandbox pod built from a Sandbox: its template, plus what protection needs from creation on — the
 * exclusivity finalizer, the sandbox labels, and a controller owner reference — and, when asked for, the shell
 * reaper sidecar. Pure.
 */
import type { V1Container, V1EnvVar, V1Pod, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { reaperInjection } from '../sidecar/injection/injection.ts';
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  LABELS,
  MANAGED_BY,
  SANDBOX,
} from '../api/names.ts';
import type { Sandbox } from '../api/objects.ts';

export type SidecarSettings = {
  /** The operator's own image: the sidecar is the same image with another command. */
  readonly image: string;
  readonly serviceAccountName: string;
};

/** The sidecar's command in the operator image (see Dockerfile). */
export const SIDECAR_COMMAND = ['node', 'dist/operator/cli/sidecar.js'] as const;

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
      ...(template.metadata?.annotations
        ? { annotations: templateAnnotations(template.metadata.annotations) }
        : {}),
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
 * The template's annotations without the deletion override: an override must be set on the pod by someone
 * entitled to it, never come from a template (a Sandbox stored before the CRD refused it may still hold it).
 */
function templateAnnotations(annotations: Readonly<Record<string, string>>): Record<string, string> {
  const { [ANNOTATIONS.deletionOverride]: _dropped, ...rest } = annotations;
  return rest;
}

/** The reaper's pod additions come from operator/sidecar/injection/injection.ts, where its privilege model lives. */
function injectReaper(pod: V1Pod, sandbox: Sandbox, sidecar: SidecarSettings): void {
  const spec = pod.spec;
  if (!spec) return;
  const injection = reaperInjection({
    image: sidecar.image,
    command: SIDECAR_COMMAND,
    sandbox: sandbox.metadata.name,
    gracePeriodSeconds: sandbox.spec.shellReaper.gracePeriodSeconds,
  });
  Object.assign(spec, injection.podSpec, { serviceAccountName: sidecar.serviceAccountName });
  spec.containers = [
    ...spec.containers.map((container) => ({
      ...container,
      volumeMounts: [
        ...(container.volumeMounts ?? []),
        ...(injection.agentVolumeMounts as unknown as V1VolumeMount[]),
      ],
      env: [...(container.env ?? []), ...(injection.agentEnv as unknown as V1EnvVar[])],
    })),
    injection.container as unknown as V1Container,
  ];
  spec.volumes = [...(spec.volumes ?? []), ...(injection.volumes as unknown as V1Volume[])];
}
