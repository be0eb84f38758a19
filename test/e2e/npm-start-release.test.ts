/**
 * A new user's first deletion under `npm start`: an exclusive sandbox is released — its pods and the Sandbox
 * are gone — because the operator runs under its own identity, which the pod-protection policy trusts. The
 * admin kubeconfig the banner prints is the user's: its `kubectl delete pod` of a sandbox pod is refused.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { runKubectl } from '../../operator/local-cluster/index.ts';
import { eventually } from '../integration/controller/operator.ts';

describe('npm start', () => {
  it.skipIf(inject('clusterKind') !== 'local')(
    'releases an exclusive sandbox, while the printed admin identity cannot delete a sandbox pod',
    async () => {
      const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX_OPERATOR_PROBE_BIND: '127.0.0.1:0' };
      delete env['KUBECONFIG'];
      delete env['KUBERNETES_SERVICE_HOST'];
      const child = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = once(child, 'exit');
      try {
        let ended = false;
        void exited.then(() => (ended = true));
        const kubeconfig = await eventually(
          'the banner',
          () => {
            if (ended) throw new Error(`npm start exited early:\n${output.slice(-3000)}`);
            return Promise.resolve(/export KUBECONFIG=(\S+)/.exec(output)?.[1]);
          },
          180_000,
        );
        const kubectl = (args: string[]) => runKubectl(inject('kubectl'), kubeconfig, args);
        await eventually('the identity check', () =>
          Promise.resolve(
            output.includes('the pod-protection policy trusts this operator') ? true : undefined,
          ),
        );
        expect((await kubectl(['create', 'namespace', 'team-a'])).exitCode).toBe(0);
        const applied = await kubectl([
          'apply',
          '--server-side',
          '-n',
          'team-a',
          '-f',
          'examples/isolated-sandbox.yaml',
        ]);
        expect(applied.stderr).toBe('');
        const podOf = async () =>
          (
            await kubectl([
              'get',
              'pods',
              '-n',
              'team-a',
              '-l',
              'sandbox.agents.dev/sandbox=isolated-billing',
              '-o',
              'name',
            ])
          ).stdout.trim();
        const pod = await eventually('the sandbox pod', async () => (await podOf()) || undefined, 60_000);

        const refused = await kubectl(['delete', pod, '-n', 'team-a', '--wait=false']);
        expect(refused.exitCode).not.toBe(0);
        expect(refused.stderr).toContain('is kept until its exclusivity decision releases it');

        const deleted = await kubectl([
          'delete',
          'sandbox',
          'isolated-billing',
          '-n',
          'team-a',
          '--wait=false',
        ]);
        expect(deleted.exitCode).toBe(0);
        await eventually(
          'pods and Sandbox gone',
          async () => {
            const sandbox = await kubectl([
              'get',
              'sandbox',
              'isolated-billing',
              '-n',
              'team-a',
              '--ignore-not-found',
              '-o',
              'name',
            ]);
            return sandbox.stdout.trim() === '' && (await podOf()) === '' ? true : undefined;
          },
          60_000,
        );
        expect(output).not.toContain('not ready:');
      } finally {
        if (child.exitCode === null && child.signalCode === null) {
          process.kill(-(child.pid ?? 0), 'SIGINT');
          await exited;
        }
      }
    },
  );
});
