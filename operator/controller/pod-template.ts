/**
 * The sandbox pod built from a Sandbox: its template, plus what protection needs from creation on — the
 * exclusivity finalizer, the sandbox labels, and a controller owner reference — and, when asked for, the shell
 * reaper sidecar. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { applyReaper } from '../sidecar/injection/apply.ts';
import { agentUserOf, chooseReaperMode, type PodSecurityLevel } from '../sidecar/injection/mode.ts';
import type { Misconfiguration } from '../runtime/error-policy.ts';
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  LABELS,
  MANAGED_BY,
  SANDBOX,
} from '../api/names.ts';
import type { Sandbox } from '../api/objects.ts';
import { claimTemplatesOf } from '../api/volume-claims.ts';
import { REAPER_COMMAND } from '../api/reaper-shape.ts';
import { claimVolumes } from './claims.ts';

export type SidecarSettings = {
  /** The operator's own image: the sidecar is the same image with another command. */
  readonly image: string;
  readonly serviceAccountName: string;
  /**
   * A namespace's PodSecurity enforce level, when known (the manager's cached namespace watch,
   * cache/namespace-levels.ts): the reaper's mode must fit it.
   */
  readonly podSecurityLevel?: (namespace: string) => PodSecurityLevel | undefined;
  /**
   * Whether an administrator opted the namespace in to the reaper's Privileged mode (the manager's cached
   * watch, cache/privileged-reaper-namespaces.ts); absent: no namespace is.
   */
  readonly privilegedReaperAllowed?: (namespace: string) => boolean;
};

export const podName = (sandbox: string, ordinal: number) => `${sandbox}-${ordinal}`;

export function sandboxPod(sandbox: Sandbox, ordinal: number, sidecar: SidecarSettings): V1Pod {
  const { metadata, spec } = sandbox;
  const template = spec.podTemplate;
  const podSpec = structuredClone(template.spec) as unknown as NonNullable<V1Pod['spec']>;
  // The persistent workspace: each claim mounted as a volume named after its template (claims.ts).
  const claims = claimVolumes(metadata.name, claimTemplatesOf(spec));
  if (claims.length > 0) podSpec.volumes = [...(podSpec.volumes ?? []), ...claims];
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

/**
 * Why no pod of this sandbox can get the shell reaper, if none can: a template and namespace no reaper mode
 * fits (operator/sidecar/injection/mode.ts decides). A person must change the template or the namespace, so
 * this is a misconfiguration, recorded once, not a failure retried with backoff.
 */
export function reaperModeRefusal(sandbox: Sandbox, sidecar: SidecarSettings): Misconfiguration | undefined {
  const { shellReaper, podTemplate } = sandbox.spec;
  if (!shellReaper.enabled) return undefined;
  const choice = chooseReaperMode({
    requested: shellReaper.mode ?? 'Auto',
    agentUser: agentUserOf(podTemplate.spec as unknown as Parameters<typeof agentUserOf>[0]),
    level: sidecar.podSecurityLevel?.(sandbox.metadata.namespace),
    privilegedAllowed: sidecar.privilegedReaperAllowed?.(sandbox.metadata.namespace) ?? false,
    namespace: sandbox.metadata.namespace,
  });
  if (choice.ok) return undefined;
  return {
    reason: 'ShellReaperModeRefused',
    refused: `no pod is created: the shell reaper (spec.shellReaper) cannot run in any mode the pod template and namespace admit`,
    fix: choice.message,
  };
}

/** The reaper's pod additions, mode and privilege come from operator/sidecar/injection/apply.ts. */
function injectReaper(pod: V1Pod, sandbox: Sandbox, sidecar: SidecarSettings): void {
  if (!pod.spec) return;
  pod.spec = applyReaper(pod.spec, {
    image: sidecar.image,
    command: REAPER_COMMAND,
    sandbox: sandbox.metadata.name,
    namespace: sandbox.metadata.namespace,
    gracePeriodSeconds: sandbox.spec.shellReaper.gracePeriodSeconds,
    requestedMode: sandbox.spec.shellReaper.mode ?? 'Auto',
    level: sidecar.podSecurityLevel?.(sandbox.metadata.namespace),
    privilegedAllowed: sidecar.privilegedReaperAllowed?.(sandbox.metadata.namespace) ?? false,
    serviceAccountName: sidecar.serviceAccountName,
  });
}
