import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../operator/api/index.ts';
import { sandboxPod } from '../../../operator/controller/pod-template.ts';
import { sandbox as sandboxBuilder } from '../builders.ts';

const sandbox = (reaper: boolean): Sandbox =>
  sandboxBuilder('sbx-a')
    .withMetadata({ namespace: 'team', uid: 'uid-1' })
    .withSpec({
      replicas: 1,
      podTemplate: {
        metadata: { labels: { app: 'agent' } },
        spec: {
          // One pinned user: the reaper runs as it (SameUser); Auto never runs it as root (issue 26 #2).
          securityContext: { runAsUser: 1000, runAsGroup: 1000 },
          containers: [{ name: 'agent', image: 'agent:1' }],
        },
      },
      shellReaper: { enabled: reaper, gracePeriodSeconds: 7 },
    })
    .build();
const sidecar = { image: 'operator:1', serviceAccountName: 'sandbox-shell-reaper' };

describe('sandboxPod', () => {
  it('carries the exclusivity finalizer, the sandbox labels and a controller owner reference from creation', () => {
    const pod = sandboxPod(sandbox(false), 0, sidecar);
    expect(pod.metadata).toMatchObject({
      name: 'sbx-a-0',
      finalizers: ['sandbox.agents.dev/exclusivity'],
      labels: { app: 'agent', 'sandbox.agents.dev/sandbox': 'sbx-a', 'sandbox.agents.dev/pod-index': '0' },
      ownerReferences: [
        { kind: 'Sandbox', name: 'sbx-a', uid: 'uid-1', controller: true, blockOwnerDeletion: true },
      ],
    });
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(['agent']);
  });

  it('never copies a deletion override from the template (it must be set on the pod itself)', () => {
    const withOverride = sandbox(false);
    withOverride.spec.podTemplate.metadata = {
      annotations: { 'sandbox.agents.dev/deletion-override': 'preset', note: 'kept' },
    };
    expect(sandboxPod(withOverride, 0, sidecar).metadata?.annotations).toEqual({ note: 'kept' });
  });

  it('injects the reaper with a shared process namespace, its own token and only the capabilities it needs', () => {
    const pod = sandboxPod(sandbox(true), 0, sidecar);
    expect(pod.spec).toMatchObject({
      shareProcessNamespace: true,
      automountServiceAccountToken: false,
      serviceAccountName: 'sandbox-shell-reaper',
    });
    const reaper = pod.spec?.initContainers?.find((c) => c.name === 'shell-reaper');
    expect(reaper?.securityContext).toMatchObject({ runAsUser: 1000, capabilities: { drop: ['ALL'] } });
    expect(reaper?.securityContext?.capabilities?.add).toBeUndefined();
    expect(reaper?.env).toEqual(expect.arrayContaining([expect.objectContaining({ value: '7' })]));
    expect(reaper?.command).toEqual(['node', 'dist/bundle/sidecar.mjs']);
    const agent = pod.spec?.containers.find((c) => c.name === 'agent');
    expect(agent?.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'sandbox-reaper-socket', mountPath: '/var/run/sandbox-reaper', readOnly: true },
      ]),
    );
    expect(agent?.volumeMounts?.some((m) => m.mountPath.includes('serviceaccount'))).toBe(false);
  });

  it('does not alias the template: two pods never share mutable spec objects', () => {
    const source = sandbox(true);
    sandboxPod(source, 0, sidecar);
    expect(source.spec.podTemplate.spec.containers).toHaveLength(1);
  });
});
