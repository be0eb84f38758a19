/**
 * The sidecar's privilege modes against the API server's own PodSecurity admission (issue 12): a sandbox
 * pod with the reaper in SameUser mode is admitted at every level, `restricted` included; Privileged mode
 * only at `privileged`; and the operator refuses, with the fix, a mode it knows the level would refuse.
 * The pods come from the controller's pod template and are created with dryRun, so nothing schedules.
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../operator/api/index.ts';
import { sandboxPod } from '../../../operator/controller/pod-template.ts';
import { kubeConfig } from '../../harness/kube.ts';

const LEVELS = ['restricted', 'baseline', 'privileged'] as const;
const suffix = Math.random().toString(16).slice(2, 8);
const namespaceOf = (level: string) => `psa-${level}-${suffix}`;

/** An agent that itself meets `restricted`, so only the sidecar decides admission. */
const sandbox = (namespace: string, mode: 'SameUser' | 'Privileged'): Sandbox => ({
  apiVersion: 'sandbox.agents.dev/v1alpha1',
  kind: 'Sandbox',
  metadata: { name: 'sbx-a', namespace, uid: 'uid-1' },
  spec: {
    provider: 'kubernetes',
    replicas: 1,
    podTemplate: {
      metadata: {},
      spec: {
        securityContext: {
          runAsUser: 1000,
          runAsGroup: 1000,
          runAsNonRoot: true,
          seccompProfile: { type: 'RuntimeDefault' },
        },
        containers: [
          {
            name: 'agent',
            image: 'agent:1',
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      },
    },
    cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
    shellReaper: { enabled: true, gracePeriodSeconds: 5, mode },
    operatingMode: 'Running',
  },
});

/** The pod as the operator builds it, minus what only the operator may create (owner, finalizer). */
function podFor(namespace: string, mode: 'SameUser' | 'Privileged'): V1Pod {
  // As the operator would build it in a namespace an administrator opted in to the Privileged mode: what
  // PodSecurity admission then says of the pod itself is the question here.
  const pod = sandboxPod(sandbox(namespace, mode), 0, {
    image: 'operator:1',
    serviceAccountName: 'default',
    podSecurityLevel: () => 'privileged',
    privilegedReaperAllowed: () => true,
  });
  return { ...pod, metadata: { name: pod.metadata?.name ?? 'sbx-a-0', namespace } };
}

async function admitted(namespace: string, mode: 'SameUser' | 'Privileged'): Promise<true | string> {
  try {
    await kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespacedPod({ namespace, body: podFor(namespace, mode), dryRun: 'All' });
    return true;
  } catch (error) {
    const body = (error as { body?: unknown }).body;
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string } | undefined;
    return status?.message ?? String(error);
  }
}

describe('privilege modes under PodSecurity admission', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    for (const level of LEVELS) {
      await core.createNamespace({
        body: {
          metadata: { name: namespaceOf(level), labels: { 'pod-security.kubernetes.io/enforce': level } },
        },
      });
    }
  });
  afterAll(async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    for (const level of LEVELS) await core.deleteNamespace({ name: namespaceOf(level) });
  });

  it('admits SameUser at every level, restricted included', async () => {
    for (const level of LEVELS)
      expect([level, await admitted(namespaceOf(level), 'SameUser')]).toEqual([level, true]);
  });

  it('admits Privileged only at privileged; restricted and baseline refuse it, naming the capabilities', async () => {
    expect(await admitted(namespaceOf('privileged'), 'Privileged')).toBe(true);
    for (const level of ['restricted', 'baseline'] as const) {
      const answer = await admitted(namespaceOf(level), 'Privileged');
      expect(answer).toMatch(new RegExp(`violates PodSecurity "${level}:latest"`));
      expect(answer).toMatch(/SYS_PTRACE|non-default capabilities/);
    }
  });

  it('refuses up front, with the fix, what the level would refuse, when the operator knows the level', () => {
    const settings = {
      image: 'operator:1',
      serviceAccountName: 'default',
      podSecurityLevel: () => 'baseline' as const,
    };
    expect(() => sandboxPod(sandbox(namespaceOf('baseline'), 'Privileged'), 0, settings)).toThrow(
      /enforces PodSecurity baseline.*runAsUser and runAsGroup/,
    );
  });
});
