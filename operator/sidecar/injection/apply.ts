/**
 * Adds the shell reaper to a sandbox pod's spec (pure; the controller's pod template calls it once):
 * the mode (mode.ts), the native sidecar first among the init containers, the agent containers' mounts
 * and environment, and the pod's account. The template's own ServiceAccount is kept (issue 12): the agent
 * keeps its identity (image pull secrets, workload identity) and the sidecar's projected token is that
 * account's, so the reaper's Role must be bound to it (docs/sidecar.md); admission narrows it to this pod's
 * sandbox as it narrows the reaper's own (operator/api/reaper-rights.ts), since the agent holds its token
 * too. Only a template without an account gets the reaper's account, with no token for the agent containers.
 */
import type { V1Container, V1EnvVar, V1PodSpec, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { SidecarError } from '../contract/errors.ts';
import { reaperInjection } from './injection.ts';
import { agentUserOf, chooseReaperMode, type PodSecurityLevel, type RequestedMode } from './mode.ts';

export interface ApplyReaperInput {
  readonly image: string;
  readonly command: readonly string[];
  readonly sandbox: string;
  readonly namespace: string;
  readonly gracePeriodSeconds: number;
  readonly requestedMode: RequestedMode;
  /** The namespace's PodSecurity enforce level, when the caller knows it. */
  readonly level: PodSecurityLevel | undefined;
  /** Whether an administrator opted the namespace in to the Privileged mode (mode.ts). */
  readonly privilegedAllowed: boolean;
  /** The reaper's own account, for templates that name none. */
  readonly serviceAccountName: string;
}

/** Returns the spec with the reaper added; throws SidecarError('ModeRefused') with the fix when no mode fits. */
export function applyReaper(spec: V1PodSpec, input: ApplyReaperInput): V1PodSpec {
  const choice = chooseReaperMode({
    requested: input.requestedMode,
    agentUser: agentUserOf(spec),
    level: input.level,
    privilegedAllowed: input.privilegedAllowed,
    namespace: input.namespace,
  });
  if (!choice.ok) throw new SidecarError('ModeRefused', choice.message, { cause: input });
  const injection = reaperInjection({ ...input, mode: choice.mode });
  const ownAccount = spec.serviceAccountName !== undefined && spec.serviceAccountName !== 'default';
  return {
    ...spec,
    shareProcessNamespace: true,
    ...(ownAccount
      ? {}
      : { serviceAccountName: input.serviceAccountName, automountServiceAccountToken: false }),
    initContainers: [injection.initContainer as unknown as V1Container, ...(spec.initContainers ?? [])],
    containers: spec.containers.map((container) => ({
      ...container,
      volumeMounts: [
        ...(container.volumeMounts ?? []),
        ...(injection.agentVolumeMounts as unknown as V1VolumeMount[]),
      ],
      env: [...(container.env ?? []), ...(injection.agentEnv as unknown as V1EnvVar[])],
    })),
    volumes: [...(spec.volumes ?? []), ...(injection.volumes as unknown as V1Volume[])],
  };
}
