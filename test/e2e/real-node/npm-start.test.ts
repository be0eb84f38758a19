// A new user's `npm start` on a machine that can run the real node: the sandbox of
// examples/real-node-sandbox.yaml runs as real containers (Running 2/2), `kubectl exec` reaches the agent
// container, the shell reaper sidecar runs beside it (one process namespace), and an exclusive deletion
// stops the containers on the host, not only in the API.
import { once } from 'node:events';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { endLeftoverGroups, spawnGroup } from '../../harness/process-groups.ts';
import { runKubectl } from '@sandbox-operator/local-cluster';
import { eventually } from '../../integration/controller/operator.ts';
import { hostProcesses, requireRealNode } from './node.ts';

const AGENT_LOOP = 'while true; do sleep 5; done'; // the example's agent command

// A test that timed out never ran its own finally: end what it started before the next one starts.
afterEach(async () => {
  await endLeftoverGroups();
}, 60_000);

describe.runIf(inject('clusterKind') === 'local')('npm start with a real node', () => {
  it('runs a sandbox as real containers with the sidecar beside the agent; an exclusive deletion stops them', async (ctx) => {
    requireRealNode(ctx);
    const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX_OPERATOR_PROBE_BIND: '127.0.0.1:0' };
    delete env['KUBECONFIG'];
    delete env['KUBERNETES_SERVICE_HOST'];
    const child = spawnGroup('npm', ['start'], { env });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'exit');
    try {
      const kubeconfig = await eventually(
        'the banner',
        () => {
          if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output.slice(-3000)}`);
          return Promise.resolve(/export KUBECONFIG=(\S+)/.exec(output)?.[1]);
        },
        300_000,
      );
      expect(output).toContain('Sandbox pods run as real containers on node 127.0.0.1');
      const kubectl = (args: string[]) => runKubectl(inject('kubectl'), kubeconfig, args);
      const ok = async (args: string[]) => {
        const result = await kubectl(args);
        expect(result.exitCode, `kubectl ${args.join(' ')}: ${result.stderr}`).toBe(0);
        return result.stdout;
      };
      // The README's commands, as printed in the example's header.
      await ok(['create', 'namespace', 'team-a']);
      await ok(['apply', '--server-side', '-n', 'team-a', '-f', 'examples/real-node-sandbox.yaml']);
      await eventually(
        'the sandbox pod',
        async () => (await kubectl(['get', 'pod/agent-box-0', '-n', 'team-a'])).exitCode === 0 || undefined,
        60_000,
      );
      await ok(['wait', '--for=condition=Ready', 'pod/agent-box-0', '-n', 'team-a', '--timeout=180s']);
      const pods = await ok(['get', 'pods', '-n', 'team-a', '--no-headers']);
      expect(pods).toMatch(/agent-box-0\s+2\/2\s+Running/);
      const ps = await ok(['exec', '-n', 'team-a', 'agent-box-0', '-c', 'agent', '--', 'ps']);
      expect(ps).toContain(AGENT_LOOP);
      expect(ps).toContain('node dist/bundle/sidecar.mjs');
      await eventually(
        'the shell reaper ready (it reached the API server)',
        async () =>
          (await ok(['logs', '-n', 'team-a', 'agent-box-0', '-c', 'shell-reaper'])).includes(
            'shell reaper ready',
          ) || undefined,
        60_000,
      );
      const uid = (
        await ok(['get', 'pod/agent-box-0', '-n', 'team-a', '-o', 'jsonpath={.metadata.uid}'])
      ).trim();
      expect(hostProcesses(AGENT_LOOP, uid).length).toBeGreaterThan(0);
      expect(hostProcesses('dist/bundle/sidecar.mjs', uid).length).toBeGreaterThan(0);

      // No reference uses it: the deletion is exclusive, the operator releases the pod, kubelet stops it.
      await ok(['delete', 'sandbox', 'agent-box', '-n', 'team-a', '--timeout=120s']);
      await eventually(
        'the containers gone from the host',
        () =>
          Promise.resolve(
            hostProcesses(AGENT_LOOP, uid).length === 0 &&
              hostProcesses('dist/bundle/sidecar.mjs', uid).length === 0
              ? true
              : undefined,
          ),
        60_000,
      );
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(-(child.pid ?? 0), 'SIGINT');
        await exited;
      }
    }
  });
});
