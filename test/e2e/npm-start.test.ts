/**
 * The README's first command: `npm start` with no cluster configured starts the local control plane, prints
 * how to point kubectl at it, reconciles Sandboxes there, and stops everything on Ctrl-C (SIGINT to the
 * foreground process group) and on a SIGTERM to the npm process alone (what a supervisor or a container
 * runtime sends): the operator stops, then the control plane, and no process is left. And a new user's
 * first deletion: an exclusive sandbox is released (its pods and the Sandbox gone) because the operator
 * runs under its own identity, which the pod-protection policy trusts, while the admin kubeconfig the
 * banner prints cannot delete a sandbox pod, and the operator's own identity passes its delete review.
 */
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, afterEach } from 'vitest';
import { endLeftoverGroups, spawnGroup } from '../harness/process-groups.ts';
import { inject } from 'vitest';
import { runKubectl } from '@sandbox-operator/local-cluster';
import { eventually, pending } from '../integration/controller/operator.ts';

/** Processes whose command line mentions `text` (the run's temporary directory). */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Every process below `root` now (children, their children, …), from the parent pids in /proc. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended while we looked
    }
  }
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([pid]) => pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

const alive = (pid: number): boolean => {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

/** `npm start` as a new user runs it: no KUBECONFIG, not in a pod; its output collected. */
function startNpm() {
  const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX_OPERATOR_PROBE_BIND: '127.0.0.1:0' };
  delete env['KUBECONFIG'];
  delete env['KUBERNETES_SERVICE_HOST'];
  const child = spawnGroup('npm', ['start'], { env });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit');
  let ended = false;
  void exited.then(() => (ended = true));
  const banner = eventually(
    'the banner',
    () => {
      if (ended) throw new Error(`npm start exited early:\n${output.slice(-3000)}`);
      return Promise.resolve(
        /export KUBECONFIG=(\S+)/.exec(output)?.[1] ?? pending({ output: output.slice(-600) }),
      );
    },
    180_000,
  );
  return { child, exited, banner, output: () => output };
}

// A test that timed out never ran its own finally: end what it started before the next one starts.
afterEach(async () => {
  await endLeftoverGroups();
}, 60_000);

describe('npm start', () => {
  it.skipIf(inject('clusterKind') !== 'local')(
    'runs the operator on an embedded control plane and stops it cleanly',
    async () => {
      const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX_OPERATOR_PROBE_BIND: '127.0.0.1:0' };
      delete env['KUBECONFIG'];
      delete env['KUBERNETES_SERVICE_HOST'];
      const child = spawnGroup('npm', ['start'], { env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = once(child, 'exit');

      const kubeconfig = await eventually(
        'the banner',
        () =>
          Promise.resolve(
            /export KUBECONFIG=(\S+)/.exec(stdout)?.[1] ?? pending({ stdout: stdout.slice(-600) }),
          ),
        120_000,
      );
      expect(stdout).toContain('kubectl get sandboxes -A');
      const kubectl = (args: string[]) => runKubectl(inject('kubectl'), kubeconfig, args);
      const apply = await kubectl(['create', '-f', 'examples/isolated-sandbox.yaml', '-n', 'default']);
      expect(apply.stderr).toBe('');
      const name = /sandbox\.sandbox\.agents\.dev\/(\S+) created/.exec(apply.stdout)?.[1] ?? '';
      await eventually(
        'reconciled by the operator npm start runs',
        async () => {
          const marker = await kubectl([
            'get',
            'sandbox',
            name,
            '-n',
            'default',
            '-o',
            'jsonpath={.status.reconciliation.marker}',
          ]);
          return marker.stdout === 'true' ? true : pending({ marker: marker.stdout, stderr: marker.stderr });
        },
        60_000,
      );

      const tempDir = dirname(kubeconfig);
      expect(processesMentioning(tempDir).length).toBeGreaterThan(0); // etcd, kube-apiserver, … are running
      process.kill(-(child.pid ?? 0), 'SIGINT'); // Ctrl-C reaches the whole foreground process group
      const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
      // npm itself ends by the SIGINT it also received; what matters is that the operator and the control
      // plane stopped in order, and nothing is left running.
      expect(code === 0 || signal === 'SIGINT').toBe(true);
      expect(stdout + stderr).toMatch(/"msg":"operator stopped"[\s\S]*"msg":"local control plane stopped"/);
      await eventually(
        'no component left',
        () => {
          const left = processesMentioning(tempDir);
          return Promise.resolve(left.length === 0 ? true : pending({ left }));
        },
        20_000,
      );
    },
  );

  it.skipIf(inject('clusterKind') !== 'local')(
    'stops the operator and the control plane on a SIGTERM to the npm process alone',
    async () => {
      const npm = startNpm();
      const { child } = npm;
      const kubeconfig = await npm.banner;
      await eventually(
        'the operator reconciling',
        () =>
          Promise.resolve(
            npm.output().includes('"msg":"reconciling sandboxes"')
              ? true
              : pending({ output: npm.output().slice(-600) }),
          ),
        60_000,
      );
      const tempDir = dirname(kubeconfig);
      expect(processesMentioning(tempDir).length).toBeGreaterThan(0);
      // Everything npm started: the operator's node, etcd, kube-apiserver, kcm, kwok.
      const started = descendants(child.pid ?? 0);
      expect(started.length).toBeGreaterThanOrEqual(5);
      process.kill(child.pid ?? 0, 'SIGTERM'); // npm only: not its process group
      await eventually(
        'no component left',
        () => {
          const left = processesMentioning(tempDir);
          return Promise.resolve(left.length === 0 ? true : pending({ left }));
        },
        30_000,
      );
      await eventually(
        'every process npm started gone',
        () => {
          const alivePids = started.filter(alive);
          return Promise.resolve(alivePids.length === 0 ? true : pending({ alive: alivePids }));
        },
        30_000,
      );
      expect(npm.output()).toMatch(
        /"signal":"SIGTERM","msg":"stopping"[\s\S]*"msg":"operator stopped"[\s\S]*"msg":"local control plane stopped"[\s\S]*"msg":"stopped"/,
      );
    },
  );
  it.skipIf(inject('clusterKind') !== 'local')(
    'releases an exclusive sandbox, while the printed admin identity cannot delete a sandbox pod',
    async () => {
      const npm = startNpm();
      const { child, exited } = npm;
      try {
        const kubeconfig = await npm.banner;
        const kubectl = (args: string[]) => runKubectl(inject('kubectl'), kubeconfig, args);
        await eventually('the identity check', () =>
          Promise.resolve(
            npm.output().includes('the pod-protection policy trusts this operator')
              ? true
              : pending({ output: npm.output().slice(-600) }),
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
        const pod = await eventually(
          'the sandbox pod',
          async () => (await podOf()) || pending({ pods: 'none labelled for isolated-billing' }),
          60_000,
        );

        const refused = await kubectl(['delete', pod, '-n', 'team-a', '--wait=false']);
        expect(refused.exitCode).not.toBe(0);
        expect(refused.stderr).toContain('is kept until its exclusivity decision releases it');

        // The operator's own identity (its kubeconfig beside the admin's) passes its delete review, which
        // npm start registers as the chart's deleteReview does: a reference foreign to a standing sandbox
        // stays, so a leaked operator token cannot unblock a shared sandbox's deletion.
        await kubectl(['apply', '--server-side', '-n', 'team-a', '-f', 'examples/shared-sandbox.yaml']);
        const asOperator = (args: string[]) =>
          runKubectl(inject('kubectl'), join(dirname(kubeconfig), 'operator.kubeconfig'), args);
        const foreign = await asOperator(['delete', 'sref', 'board-main', '-n', 'team-a', '--wait=false']);
        expect(foreign.exitCode).not.toBe(0);
        expect(foreign.stderr).toMatch(
          /admission webhook "reference-deletes\.operator-review\.sandbox\.agents\.dev" denied the request: sessionreference team-a\/board-main is foreign to/,
        );
        expect((await kubectl(['get', 'sref', 'board-main', '-n', 'team-a'])).exitCode).toBe(0);

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
            const pods = await podOf();
            return sandbox.stdout.trim() === '' && pods === ''
              ? true
              : pending({ sandbox: sandbox.stdout.trim(), pods });
          },
          60_000,
        );
        expect(npm.output()).not.toContain('not ready:');
      } finally {
        if (child.exitCode === null && child.signalCode === null) {
          process.kill(-(child.pid ?? 0), 'SIGINT');
          await exited;
        }
      }
    },
  );
});
