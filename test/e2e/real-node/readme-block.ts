/**
 * What the README's real-node walkthroughs share (issue 27's workspace, issue 28's warm pool): the lines of
 * the first `sh` block under a heading, taken from the file; `npm start` as the quick start runs it, on its
 * real node, with ports of its own; and each line run as printed (bash, from the repository root, the built
 * kubectl and the user's PATH).
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import { promisify } from 'node:util';
import { inject, type TestContext } from 'vitest';
import { spawnGroup } from '../../harness/process-groups.ts';
import { repositoryRoot, userPath } from '../../harness/plugin.ts';
import { eventually } from '../../integration/controller/operator.ts';

const run = promisify(execFile);

/** The lines of the first `sh` block under `heading` in README.md, comments kept (bash drops them). */
export function readmeBlock(heading: string, readme = readFileSync(`${repositoryRoot}/README.md`, 'utf8')) {
  const section = readme.slice(readme.indexOf(heading));
  const block = /^```sh\n([\s\S]*?)^```/m.exec(section)?.[1] ?? '';
  return block.split('\n').filter((line) => line.trim() !== '');
}

export async function bash(line: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
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

/**
 * `npm start` for the test's duration (stopped as a user stops it when the test finishes), and the user's
 * environment once its banner names the kubeconfig; `output` is what it has printed so far.
 */
export async function startAsUser(
  ctx: TestContext,
): Promise<{ env: NodeJS.ProcessEnv; output: () => string }> {
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
  return {
    env: {
      ...process.env,
      PATH: [dirname(inject('kubectl')), userPath()].join(delimiter),
      KUBECONFIG: kubeconfig,
    },
    output: () => output,
  };
}
