// The shell reaper's SameUser mode in a real pod under PodSecurity `restricted` (issue 12): the pod the
// operator's own builder makes for a template pinned to uid/gid 1000 is admitted by the API server's
// PodSecurity admission at `restricted`; its sidecar runs as uid 1000 with no capabilities, the agent
// (uid 1000) connects to the socket it was handed, and a subagent's completed turn ends that session's
// shells on the host while the root session's keep running. A Privileged-mode pod is refused there.
//
// Why the pod is submitted directly, and the sidecar runs without the API server: on this local node a pod
// reaches the API server only over the host network (operator/local-cluster/node/loopback-api.ts puts
// operator-owned reaper pods there), and no level but `privileged` admits hostNetwork. That policy leaves
// pods nobody owns alone, so this pod is the builder's output without owner, finalizer and sandbox labels,
// and without the sidecar's cluster variables: its turn ends come over the socket, believed as sent. The
// watch, status and Events run in real pods in sidecar.test.ts (Privileged, in a `privileged` namespace).
import { randomBytes } from 'node:crypto';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Sandbox } from '../../../operator/api/index.ts';
import { sandboxPod } from '../../../operator/controller/pod-template.ts';
import { cacheRoot } from '@sandbox-operator/local-cluster';
import { operatorImageOnNode } from '@sandbox-operator/local-cluster/images/on-node';
import { eventually } from '../../integration/controller/operator.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { endTurnFromAgent, registerShell, sidecarReady, uidOf } from './agent-shell.ts';
import { hostProcesses, onRealNode, type RealNodeInfo } from './node.ts';

const node = inject('realNode');
const namespace = testNamespace('real-sameuser');
const tag = randomBytes(3).toString('hex');
const POD = 'agent-0';
const CLUSTER_VARIABLES = new Set(['SANDBOX_REAPER_NAMESPACE', 'SANDBOX_REAPER_SANDBOX']);

/** A template that meets `restricted` itself and pins one non-root user: Auto picks SameUser. */
function sandbox(image: string, real: RealNodeInfo, mode?: 'Privileged'): Sandbox {
  return {
    apiVersion: 'sandbox.agents.dev/v1alpha1',
    kind: 'Sandbox',
    metadata: { name: 'agent', namespace, uid: 'uid-1' },
    spec: {
      provider: 'kubernetes',
      replicas: 1,
      podTemplate: {
        metadata: {},
        spec: onRealNode(
          {
            securityContext: {
              runAsUser: 1000,
              runAsGroup: 1000,
              runAsNonRoot: true,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            containers: [
              {
                name: 'agent',
                image,
                imagePullPolicy: 'IfNotPresent',
                command: ['node', '-e', 'setInterval(() => {}, 1 << 30)'],
                securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              },
            ],
          },
          real,
        ),
      },
      cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
      shellReaper: { enabled: true, gracePeriodSeconds: 2, ...(mode === undefined ? {} : { mode }) },
      operatingMode: 'Running',
    },
  };
}

/** The builder's pod, unowned (see the header) and with the sidecar off the API server. */
function podFor(image: string, real: RealNodeInfo, mode?: 'Privileged'): V1Pod {
  const built = sandboxPod(sandbox(image, real, mode), 0, {
    image,
    serviceAccountName: 'sandbox-shell-reaper',
  });
  const strip = (c: V1Container): V1Container => ({
    ...c,
    env: (c.env ?? []).filter((e) => !CLUSTER_VARIABLES.has(e.name)),
  });
  if (built.spec === undefined) throw new Error('the builder made no pod spec');
  return {
    ...built,
    metadata: { name: POD, namespace },
    spec: {
      ...built.spec,
      initContainers: (built.spec.initContainers ?? []).map(strip),
      containers: built.spec.containers.map(strip),
    },
  };
}

describe.skipIf(node === null)('the shell reaper’s SameUser mode in a real pod under restricted', () => {
  let image = '';

  beforeAll(async () => {
    const real = node as RealNodeInfo;
    image = await operatorImageOnNode(cacheRoot(), real.containerdSocket, () => undefined);
    await kubectlOk(['label', 'namespace', namespace, 'pod-security.kubernetes.io/enforce=restricted']);
    await kubectlOk(['create', 'serviceaccount', 'sandbox-shell-reaper', '-n', namespace]);
    await kubectlOk(['create', '-f', '-'], { input: JSON.stringify(podFor(image, real)) });
    await kubectlOk(['wait', '--for=condition=Ready', `pod/${POD}`, '-n', namespace, '--timeout=180s']);
    await sidecarReady(namespace, POD);
  }, 600_000);

  afterAll(async () => {
    await kubectl(['delete', 'pod', POD, '-n', namespace, '--wait=false']);
  });

  it('was admitted as built: no host network, the sidecar as uid 1000 with no capabilities', async () => {
    const pod = JSON.parse(await kubectlOk(['get', 'pod', POD, '-n', namespace, '-o', 'json'])) as V1Pod;
    expect(pod.spec?.hostNetwork).toBeUndefined();
    const reaper = pod.spec?.initContainers?.find((c) => c.name === 'shell-reaper');
    expect(reaper?.securityContext).toMatchObject({
      runAsUser: 1000,
      runAsGroup: 1000,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(reaper?.securityContext?.capabilities?.add).toBeUndefined();
  });

  it('ends a subagent’s shells at its completed turn and keeps the root’s, all as uid 1000', async () => {
    const seconds = 40_000 + (parseInt(tag, 16) % 9_000) * 10;
    const childShell = `sleep ${String(seconds + 1)}`;
    const rootShell = `sleep ${String(seconds + 2)}`;
    const child = { session: `child-${tag}`, turn: 't1' };
    const root = { session: `root-${tag}`, turn: 'p1' };
    expect(
      await registerShell(namespace, POD, { ...child, command: `${childShell} & ${childShell} & wait` }),
    ).toBe('Registered');
    expect(await registerShell(namespace, POD, { ...root, command: `${rootShell} & wait` })).toBe(
      'Registered',
    );
    await eventually(
      'the shells running on the host',
      () =>
        Promise.resolve(
          hostProcesses(childShell).length >= 2 && hostProcesses(rootShell).length >= 1 ? true : undefined,
        ),
      30_000,
    );
    expect(new Set([...hostProcesses(childShell), ...hostProcesses(rootShell)].map(uidOf))).toEqual(
      new Set([1000]),
    );
    expect(await endTurnFromAgent(namespace, POD, { ...root, role: 'Root' })).toBe('Keep');
    expect(await endTurnFromAgent(namespace, POD, { ...child, role: 'Subagent' })).toBe('Retire');
    await eventually(
      'the subagent’s shell group ended',
      () => Promise.resolve(hostProcesses(childShell).length === 0 ? true : undefined),
      60_000,
    );
    expect(hostProcesses(rootShell).length).toBeGreaterThanOrEqual(1);
    // The sidecar's own processes run as the agent's user too.
    const podUid = await kubectlOk(['get', 'pod', POD, '-n', namespace, '-o', 'jsonpath={.metadata.uid}']);
    const sidecar = hostProcesses('dist/bundle/sidecar.mjs', podUid);
    expect(sidecar.length).toBeGreaterThanOrEqual(1);
    expect(new Set(sidecar.map(uidOf))).toEqual(new Set([1000]));
  });

  it('never builds the Privileged mode’s pod in this namespace: the operator refuses it before admission would', () => {
    // Issue 26 #2: Privileged needs an administrator's opt-in and a privileged namespace; this one is
    // restricted, so the builder refuses, naming the fix (PodSecurity restricted would refuse the pod too).
    expect(() => podFor(image, node as RealNodeInfo, 'Privileged')).toThrow(
      /refuses the shell reaper's Privileged mode .*runAsUser and runAsGroup/,
    );
  });
});
