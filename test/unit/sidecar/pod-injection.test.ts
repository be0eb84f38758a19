/**
 * The sidecar in a sandbox pod, through the controller's own pod template (issue 12): a native sidecar
 * that starts before the agent, the template's ServiceAccount kept, the socket handed to the agent's user,
 * the output volume writable by the sidecar, and the privilege mode each PodSecurity level admits.
 */
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../operator/api/index.ts';
import { sandboxPod } from '../../../operator/controller/pod-template.ts';

const sandbox = (spec: Partial<V1PodSpec> = {}, mode?: 'SameUser' | 'Privileged'): Sandbox => ({
  apiVersion: 'sandbox.agents.dev/v1alpha1',
  kind: 'Sandbox',
  metadata: { name: 'sbx-a', namespace: 'team', uid: 'uid-1' },
  spec: {
    provider: 'kubernetes',
    replicas: 1,
    podTemplate: {
      metadata: {},
      spec: {
        // One pinned user, unless a test says otherwise: Auto never runs the sidecar as root (issue 26 #2).
        securityContext: { runAsUser: 1000, runAsGroup: 1000 },
        containers: [{ name: 'agent', image: 'agent:1' }],
        ...spec,
      } as unknown as Sandbox['spec']['podTemplate']['spec'],
    },
    cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
    shellReaper: { enabled: true, gracePeriodSeconds: 7, ...(mode === undefined ? {} : { mode }) },
    operatingMode: 'Running',
  },
});
const sidecar = { image: 'operator:1', serviceAccountName: 'sandbox-shell-reaper' };
const pinned = { securityContext: { runAsUser: 1000, runAsGroup: 1000 } };
const unpinned = { securityContext: {} };
/** A namespace an administrator opted in to the Privileged mode, at the `privileged` level. */
const optedIn = {
  ...sidecar,
  podSecurityLevel: () => 'privileged' as const,
  privilegedReaperAllowed: () => true,
};

const reaperOf = (spec: V1PodSpec | undefined): V1Container | undefined =>
  [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].find((c) => c.name === 'shell-reaper');
const envOf = (c: V1Container | undefined) =>
  Object.fromEntries((c?.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])));

describe('the reaper in the sandbox pod', () => {
  it('is a native sidecar: the first init container, restartPolicy Always, started once its socket answers', () => {
    const spec = sandboxPod(
      sandbox({ initContainers: [{ name: 'setup', image: 'setup:1' }] }),
      0,
      sidecar,
    ).spec;
    expect(spec?.initContainers?.map((c) => c.name)).toEqual(['shell-reaper', 'setup']);
    expect(spec?.containers.map((c) => c.name)).toEqual(['agent']);
    const reaper = spec?.initContainers?.[0];
    expect(reaper?.restartPolicy).toBe('Always');
    expect(reaper?.startupProbe?.exec?.command).toEqual(
      expect.arrayContaining(['node', '/var/run/sandbox-reaper/reaper.sock']),
    );
  });

  it('keeps the template’s own ServiceAccount and its token setting', () => {
    const spec = sandboxPod(sandbox({ serviceAccountName: 'agent-identity' }), 0, sidecar).spec;
    expect(spec?.serviceAccountName).toBe('agent-identity');
    expect(spec?.automountServiceAccountToken).toBeUndefined();
    // A template without an account gets the reaper's, and the agent no token.
    expect(sandboxPod(sandbox(), 0, sidecar).spec).toMatchObject({
      serviceAccountName: 'sandbox-shell-reaper',
      automountServiceAccountToken: false,
    });
  });

  it('mounts the output volume read-write in the sidecar, so it can bound and remove what it tails', () => {
    const reaper = reaperOf(sandboxPod(sandbox(), 0, sidecar).spec);
    const output = reaper?.volumeMounts?.find((m) => m.name === 'sandbox-reaper-output');
    expect(output?.readOnly).not.toBe(true);
  });

  it('runs as the agent’s pinned user with no capabilities (SameUser: admitted by restricted), socket 0600', () => {
    const reaper = reaperOf(sandboxPod(sandbox(pinned), 0, sidecar).spec);
    expect(reaper?.securityContext).toMatchObject({
      runAsUser: 1000,
      runAsGroup: 1000,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(reaper?.securityContext?.capabilities?.add).toBeUndefined();
    expect(envOf(reaper)).toMatchObject({
      SANDBOX_REAPER_MODE: 'SameUser',
      SANDBOX_REAPER_SOCKET_MODE: '0600',
    });
  });

  it('runs as root with KILL, SYS_PTRACE, DAC_OVERRIDE, CHOWN when asked (Privileged), handing the socket to the agent', () => {
    const reaper = reaperOf(sandboxPod(sandbox(pinned, 'Privileged'), 0, optedIn).spec);
    expect(reaper?.securityContext).toMatchObject({
      runAsUser: 0,
      capabilities: { drop: ['ALL'], add: ['KILL', 'SYS_PTRACE', 'DAC_OVERRIDE', 'CHOWN'] },
    });
    // The agent owns it; root's group lets the sidecar's own startup probe (root) connect without DAC_OVERRIDE.
    expect(envOf(reaper)).toMatchObject({
      SANDBOX_REAPER_SOCKET_OWNER: '1000:0',
      SANDBOX_REAPER_SOCKET_MODE: '0660',
    });
  });

  it('refuses, with the fix, a mode the namespace’s PodSecurity level or its administrator would refuse', () => {
    const inRestricted = { ...sidecar, podSecurityLevel: () => 'restricted' as const };
    expect(() => sandboxPod(sandbox(unpinned, 'Privileged'), 0, inRestricted)).toThrow(
      /enforces PodSecurity restricted.*runAsUser/,
    );
    // An unlabelled namespace counts as restricted; a privileged one still needs the administrator's opt-in.
    expect(() => sandboxPod(sandbox(unpinned, 'Privileged'), 0, sidecar)).toThrow(
      /enforces PodSecurity restricted \(unlabelled\)/,
    );
    expect(() =>
      sandboxPod(sandbox(unpinned, 'Privileged'), 0, { ...optedIn, privilegedReaperAllowed: () => false }),
    ).toThrow(/shell-reaper-privileged=allowed/);
    // Auto never chooses root, even where root would be allowed.
    expect(() => sandboxPod(sandbox(unpinned), 0, optedIn)).toThrow(/Auto never runs the sidecar as root/);
    expect(() => sandboxPod(sandbox(unpinned, 'SameUser'), 0, sidecar)).toThrow(
      /SameUser.*runAsUser and runAsGroup/,
    );
    expect(reaperOf(sandboxPod(sandbox(pinned), 0, inRestricted).spec)?.securityContext?.runAsUser).toBe(
      1000,
    );
  });
});
