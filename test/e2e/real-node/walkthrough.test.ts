// README.md's "A workspace that outlives its pod", literally (issue 27): the commands of its code block, taken
// from the file and run as printed (bash, from the repository root, the built kubectl on PATH) against the
// `npm start` the quick start tells the user to run, on its real node — write a file, drain the node (the
// drain finishes, the operator moves the pod), uncordon, read the file from the new container; suspend,
// resume, read it again. The quick start's earlier block made the namespace team-a; this test makes it too.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { endLeftoverGroups, spawnGroup } from '../../harness/process-groups.ts';
import { repositoryRoot, userPath } from '../../harness/plugin.ts';
import { eventually } from '../../integration/controller/operator.ts';
import { requireRealNode } from './node.ts';

const run = promisify(execFile);
const HEADING = '### A workspace that outlives its pod';

/** The lines of the first `sh` block under the heading, comments kept (bash drops them). */
export function walkthroughCommands(readme: string): string[] {
  const section = readme.slice(readme.indexOf(HEADING));
  const block = /^```sh\n([\s\S]*?)^```/m.exec(section)?.[1] ?? '';
  return block.split('\n').filter((line) => line.trim() !== '');
}

async function bash(line: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('bash', ['-c', line], {
      cwd: repositoryRoot,
      env,
      timeout: 240_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, output: (failed.stdout ?? '') + (failed.stderr ?? '') };
  }
}

// A test that timed out never ran its own finally: end what it started before the next one starts.
afterEach(async () => {
  await endLeftoverGroups();
}, 60_000);

describe.runIf(inject('clusterKind') === 'local')(
  'the README walkthrough of a workspace that outlives its pod',
  () => {
    it('keeps the file through a drain and a suspension, as printed', { timeout: 900_000 }, async (ctx) => {
      requireRealNode(ctx);
      const commands = walkthroughCommands(readFileSync(`${repositoryRoot}/README.md`, 'utf8'));
      expect(commands.length).toBeGreaterThan(10);
      expect(commands.some((line) => line.startsWith('kubectl drain 127.0.0.1 '))).toBe(true);
      // Ports of its own: another operator on this machine (a test's npm start) must not keep this one from starting.
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: userPath(),
        SANDBOX_OPERATOR_PROBE_BIND: '127.0.0.1:0',
        SANDBOX_OPERATOR_METRICS_BIND: '127.0.0.1:0',
      };
      delete env['KUBECONFIG'];
      delete env['KUBERNETES_SERVICE_HOST'];
      const child = spawnGroup('bash', ['-c', 'exec npm start'], { cwd: repositoryRoot, env });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = once(child, 'exit');
      ctx.onTestFinished(async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        process.kill(-(child.pid ?? 0), 'SIGINT');
        const stopped = await Promise.race([
          exited.then(() => true),
          new Promise<false>((resolve) => setTimeout(() => resolve(false), 90_000)),
        ]);
        if (!stopped) process.kill(-(child.pid ?? 0), 'SIGKILL');
      }, 120_000);
      const kubeconfig = await eventually(
        'the banner',
        () => {
          if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output.slice(-3000)}`);
          return Promise.resolve(/export KUBECONFIG=(\S+)/.exec(output)?.[1]);
        },
        300_000,
      );
      expect(output).toContain('Sandbox pods run as real containers on node 127.0.0.1');
      const userEnv: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: [dirname(inject('kubectl')), userPath()].join(delimiter),
        KUBECONFIG: kubeconfig,
      };
      const made = await bash('kubectl create namespace team-a', userEnv);
      expect(made).toMatchObject({ code: 0 });

      // What a failure needs to be understood: each command's output, and the operator's lines about the sandbox.
      ctx.onTestFailed(() => {
        const about = output
          .split('\n')
          .filter((l) => l.includes('research-notes') || l.includes('127.0.0.1'));
        console.info(`npm start, about the sandbox and the node:\n${about.slice(-80).join('\n')}`);
      });
      const podUid = async () =>
        (await bash('kubectl get pod research-notes-0 -n team-a -o jsonpath={.metadata.uid}', userEnv))
          .output;
      const outputs: string[] = [];
      const uids: string[] = [];
      for (const line of commands) {
        if (line.startsWith('kubectl drain ')) uids.push(await podUid());
        const result = await bash(line, userEnv);
        console.info(`$ ${line}\n${result.output}`);
        expect({ line, code: result.code, output: result.output }).toMatchObject({ line, code: 0 });
        outputs.push(result.output);
        if (line.startsWith('kubectl uncordon ')) uids.push(await podUid());
      }
      // The drain moved the pod: the one read back is a new pod (a new container on the same claim).
      expect(uids[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(uids[1]).not.toBe(uids[0]);
      const said = (prefix: string) => outputs.filter((_, i) => commands[i]?.startsWith(prefix));
      // The file, read back from the container after the drain's move and after the resume.
      expect(
        said('kubectl exec -n team-a research-notes-0 -c workspace -- cat').map((o) => o.trim()),
      ).toEqual(['draft 1', 'draft 1']);
      expect(said('kubectl drain ')[0]).toContain('node/127.0.0.1 drained');
      const events = said('kubectl get events ')[0] ?? '';
      expect(events).toContain('DrainRescheduling');
      expect(events).toContain('PodRescheduled');
      const suspended = said('kubectl get sbx,pvc ')[0] ?? '';
      expect(suspended).toMatch(/research-notes\s.*Suspended/);
      expect(suspended).toMatch(/workspace-research-notes\s+Bound/);
    });
  },
);
