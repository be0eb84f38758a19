// The shell reaper in a real sandbox pod, in its Privileged mode under PodSecurity `privileged` (the level
// docs/sidecar.md documents for it): the agent container (the operator image, which carries the project's
// client) runs as uid 1000 and registers real shells through the socket the root sidecar handed to it, as
// an agent host would; a subagent's completed turn (status.turn, through the sidecar's watch) ends its
// shell groups inside the agent container, the parent's long-running shell keeps running, and a resumed
// turn starts shells again. SameUser under `restricted`: sidecar-same-user.test.ts.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cacheRoot } from '@sandbox-operator/local-cluster';
import { operatorImageOnNode } from '@sandbox-operator/local-cluster/images/on-node';
import { eventually } from '../../integration/controller/operator.ts';
import { kubectl, kubectlOk, optInToRootReaper, testNamespace } from '../../harness/kube.ts';
import { startOperatorProcess, type OperatorProcess } from '../operator-process.ts';
import { PRIVILEGED_CAPABILITIES } from '../../../operator/sidecar/injection/injection.ts';
import { confinementOf, registerShell as registerAgentShell, sidecarReady, uidOf } from './agent-shell.ts';
import { hostProcesses, realNodeToleration, type RealNodeInfo } from './node.ts';

const node = inject('realNode');
const namespace = testNamespace('real-sidecar');
const tag = randomBytes(3).toString('hex');
const POD = 'agent-0';
let operator: OperatorProcess | undefined;

const registerShell = (session: string, turn: string, command: string) =>
  registerAgentShell(namespace, POD, { session, turn, command });

async function reference(name: string, session: string, role: 'Root' | 'Subagent'): Promise<void> {
  await kubectlOk(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'SessionReference',
      metadata: { name, namespace },
      spec: {
        sandbox: 'agent',
        session,
        worktree: 'wt-agent',
        route: `r/${session}`,
        role,
        ...(role === 'Subagent' ? { parentSession: `parent-${tag}` } : {}),
      },
    }),
  });
}

const writeTurn = (name: string, turn: object) =>
  kubectlOk([
    'patch',
    'sessionreference',
    name,
    '-n',
    namespace,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { turn } }),
  ]);

describe.skipIf(node === null)('the shell reaper in a real pod', () => {
  beforeAll(async () => {
    const real = node as RealNodeInfo;
    const image = await operatorImageOnNode(cacheRoot(), real.containerdSocket, () => undefined);
    // The root sidecar (mode Privileged) runs only where an administrator allows it (issue 26 #2).
    await optInToRootReaper(namespace);
    // The sidecar's identity here: the chart's ClusterRole bound to its ServiceAccount.
    await kubectlOk(['create', 'serviceaccount', 'sandbox-shell-reaper', '-n', namespace]);
    await kubectlOk([
      'create',
      'role',
      'shell-reaper',
      '-n',
      namespace,
      '--verb=list,watch',
      '--resource=sessionreferences.sandbox.agents.dev',
    ]);
    await kubectlOk([
      'create',
      'role',
      'shell-reaper-status',
      '-n',
      namespace,
      '--verb=patch',
      '--resource=sessionreferences.sandbox.agents.dev/status',
    ]);
    await kubectlOk([
      'create',
      'role',
      'shell-reaper-events',
      '-n',
      namespace,
      '--verb=create',
      '--resource=events',
    ]);
    for (const role of ['shell-reaper', 'shell-reaper-status', 'shell-reaper-events'])
      await kubectlOk([
        'create',
        'rolebinding',
        role,
        '-n',
        namespace,
        `--role=${role}`,
        `--serviceaccount=${namespace}:sandbox-shell-reaper`,
      ]);
    await reference('parent', `parent-${tag}`, 'Root');
    await reference('child', `child-${tag}`, 'Subagent');
    operator = await startOperatorProcess(namespace, { flags: ['--sidecar-image', image] });
    await kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'sandbox.agents.dev/v1alpha1',
        kind: 'Sandbox',
        metadata: { name: 'agent', namespace },
        spec: {
          worktree: 'wt-agent',
          podTemplate: {
            spec: {
              nodeSelector: { 'kubernetes.io/hostname': real.name },
              tolerations: [realNodeToleration],
              containers: [
                {
                  name: 'agent',
                  // Not root: the root sidecar hands the socket to this user (SANDBOX_REAPER_SOCKET_OWNER).
                  securityContext: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true },
                  image,
                  imagePullPolicy: 'IfNotPresent',
                  command: ['node', '-e', 'setInterval(() => {}, 1 << 30)'],
                },
              ],
            },
          },
          shellReaper: { enabled: true, gracePeriodSeconds: 2, mode: 'Privileged' },
        },
      }),
    });
    await eventually(
      'the sandbox pod',
      async () => ((await kubectl(['get', 'pod', POD, '-n', namespace])).exitCode === 0 ? true : undefined),
      60_000,
    );
    const ready = await kubectl(
      ['wait', '--for=condition=Ready', `pod/${POD}`, '-n', namespace, '--timeout=180s'],
      {
        timeoutMs: 200_000,
      },
    );
    if (ready.exitCode !== 0) {
      const pod = await kubectl(['get', 'pod', POD, '-n', namespace, '-o', 'jsonpath={.status}']);
      const logs = await kubectl(['logs', '-n', namespace, POD, '-c', 'shell-reaper', '--tail=20']);
      throw new Error(
        `the sandbox pod is not Ready: ${ready.stderr}\n${pod.stdout}\n${logs.stdout}${logs.stderr}`,
      );
    }
    await sidecarReady(namespace, POD);
  }, 600_000);

  afterAll(async () => {
    await operator?.stop();
  });

  it('ends a subagent’s shells at its completed turn, keeps the parent’s, and lets a resumed turn start shells', async () => {
    // Distinct durations name each shell's processes on the host (bash -c's own command line names them too).
    const seconds = 30_000 + (parseInt(tag, 16) % 9_000) * 10;
    const childShell = `sleep ${String(seconds + 1)}`;
    const parentShell = `sleep ${String(seconds + 2)}`;
    const resumedShell = `sleep ${String(seconds + 3)}`;
    await writeTurn('child', { id: 't1', phase: 'Running', origin: 'ParentMessage' });
    await writeTurn('parent', { id: 'p1', phase: 'Running', origin: 'PersonMessage' });
    expect(await registerShell(`child-${tag}`, 't1', `${childShell} & ${childShell} & wait`)).toBe(
      'Registered',
    );
    expect(await registerShell(`parent-${tag}`, 'p1', `${parentShell} & wait`)).toBe('Registered');
    await eventually(
      'the shells running on the host',
      () =>
        Promise.resolve(
          hostProcesses(childShell).length >= 2 && hostProcesses(parentShell).length >= 1 ? true : undefined,
        ),
      30_000,
    );

    // The shells run as the agent's user; the sidecar that ends them as root (KILL, SYS_PTRACE, DAC_OVERRIDE,
    // CHOWN), as the runtime really confined it: those capabilities alone, never DAC_READ_SEARCH (the
    // open_by_handle_at escape), under the runtime's default seccomp filter.
    expect(new Set([...hostProcesses(childShell), ...hostProcesses(parentShell)].map(uidOf))).toEqual(
      new Set([1000]),
    );
    const podUid = await kubectlOk(['get', 'pod', POD, '-n', namespace, '-o', 'jsonpath={.metadata.uid}']);
    const sidecars = hostProcesses('dist/bundle/sidecar.mjs', podUid);
    expect(new Set(sidecars.map(uidOf))).toEqual(new Set([0]));
    for (const pid of sidecars)
      expect(confinementOf(pid)).toEqual({ capabilities: [...PRIVILEGED_CAPABILITIES].sort(), seccomp: '2' });

    await writeTurn('child', { id: 't1', phase: 'Completed', origin: 'ParentMessage' });
    await eventually(
      'the subagent’s shell group ended',
      () => Promise.resolve(hostProcesses(childShell).length === 0 ? true : undefined),
      60_000,
    );
    const shells = await eventually(
      'status.shells',
      async () => {
        const text = await kubectlOk([
          'get',
          'sessionreference',
          'child',
          '-n',
          namespace,
          '-o',
          'jsonpath={.status.shells}',
        ]);
        return text === ''
          ? undefined
          : (JSON.parse(text) as { retiredTurn?: string; retiredGroups?: number });
      },
      60_000,
    );
    expect(shells).toMatchObject({ retiredTurn: 't1', retiredGroups: 1 });
    expect(hostProcesses(parentShell).length).toBeGreaterThanOrEqual(1); // the parent's shell is untouched

    await writeTurn('child', { id: 't2', phase: 'Running', origin: 'ParentMessage' });
    expect(await registerShell(`child-${tag}`, 't2', `${resumedShell} & wait`)).toBe('Registered');
    await eventually(
      'the resumed turn’s shell running',
      () => Promise.resolve(hostProcesses(resumedShell).length >= 1 ? true : undefined),
      30_000,
    );
  });
});
