// Under which Pod Security level the API server's PodSecurity admission admits each pod the product
// creates: a sandbox pod (built by the operator's own pod builder, created as the operator), the same
// with the shell reaper sidecar, and the chart's operator pod. One row per pod and level; when the
// sidecar changes (its own issue), its row changes here and in docs/real-node.md.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Sandbox } from '../../../operator/api/index.ts';
import { sandboxPod } from '../../../operator/controller/pod-template.ts';
import { runKubectl } from '@sandbox-operator/local-cluster';
import { inject } from 'vitest';
import { kubectl, kubectlOk } from '../../harness/kube.ts';
import { template } from '../../integration/chart/helm.ts';
import { operatorKubeconfig } from '../operator-process.ts';

const LEVELS = ['privileged', 'baseline', 'restricted'] as const;
type Level = (typeof LEVELS)[number];
const suffix = randomBytes(3).toString('hex');
const namespaceFor = (level: Level) => `pss-${level}-${suffix}`;

/** A tenant template that is itself restricted, so any refusal comes from what the product adds. */
const restrictedContainer = {
  name: 'agent',
  image: 'sandbox-operator.local/shell:1.35.0',
  command: ['sleep', '3600'],
  securityContext: {
    runAsNonRoot: true,
    runAsUser: 1000,
    // With the group pinned too, the reaper runs as this user (SameUser); Auto never runs it as root.
    runAsGroup: 1000,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  },
};

function sandbox(namespace: string, reaper: boolean): Sandbox {
  return {
    apiVersion: 'sandbox.agents.dev/v1alpha1',
    kind: 'Sandbox',
    metadata: {
      name: reaper ? 'with-reaper' : 'plain',
      namespace,
      uid: '00000000-0000-0000-0000-000000000001',
    },
    spec: {
      provider: 'kubernetes',
      replicas: 1,
      podTemplate: { spec: { containers: [restrictedContainer] } },
      cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
      shellReaper: { enabled: reaper, gracePeriodSeconds: 5 },
    },
  } as unknown as Sandbox;
}

async function operatorPodTemplate(namespace: string): Promise<object> {
  const rendered = await template({}, { release: 'sandbox-operator', namespace: 'sandbox-system' });
  const deployment = rendered.objects.find((doc) => doc.kind === 'Deployment') as unknown as {
    spec: { template: { metadata: object; spec: object } };
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'operator', namespace },
    spec: deployment.spec.template.spec,
  };
}

/**
 * What each pod is admitted under. The reaper a pinned template gets runs as the agent's user with no
 * capabilities (SameUser): `Auto` never chooses the root sidecar (issue 26 #2).
 */
const EXPECTED: Record<string, Readonly<Record<Level, boolean>>> = {
  'sandbox pod': { privileged: true, baseline: true, restricted: true },
  'sandbox pod with the shell reaper': { privileged: true, baseline: true, restricted: true },
  'operator pod (chart)': { privileged: true, baseline: true, restricted: true },
};

describe('Pod Security admission of the pods the product creates', () => {
  beforeAll(async () => {
    for (const level of LEVELS) {
      await kubectlOk(['create', 'namespace', namespaceFor(level)]);
      await kubectlOk([
        'label',
        'namespace',
        namespaceFor(level),
        `pod-security.kubernetes.io/enforce=${level}`,
      ]);
    }
    return async () => {
      for (const level of LEVELS) await kubectl(['delete', 'namespace', namespaceFor(level), '--wait=false']);
    };
  });

  for (const [pod, expected] of Object.entries(EXPECTED)) {
    for (const level of LEVELS) {
      it(`${pod}: ${expected[level] ? 'admitted' : 'refused'} at ${level}`, async () => {
        const namespace = namespaceFor(level);
        const body =
          pod === 'operator pod (chart)'
            ? await operatorPodTemplate(namespace)
            : sandboxPod(sandbox(namespace, pod.includes('reaper')), 0, {
                image: 'sandbox-operator.local/sandbox-operator:dev',
                serviceAccountName: 'sandbox-shell-reaper',
              });
        // Sandbox pods are created by the operator (the pod-protection policy admits no one else).
        const kubeconfig = pod === 'operator pod (chart)' ? inject('kubeconfig') : await operatorKubeconfig();
        const result = await runKubectl(
          inject('kubectl'),
          kubeconfig,
          ['create', '--dry-run=server', '-f', '-'],
          {
            input: stringify(body),
          },
        );
        if (expected[level]) expect(result.exitCode, result.stderr).toBe(0);
        else {
          expect(result.exitCode).not.toBe(0);
          expect(result.stderr).toContain(`violates PodSecurity "${level}:latest"`);
        }
      });
    }
  }
});
