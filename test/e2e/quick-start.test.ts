/**
 * README.md's quick start, literally: the commands of its code blocks, extracted from the file and run as
 * printed (bash, from the repository root, with the machine's own `node` and the built kubectl on PATH)
 * against the `npm start` it tells the user to run; then a SIGTERM to npm stops everything. A command
 * added to the section runs here too; one the test cannot run must be named below with the reason.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it, afterEach } from 'vitest';
import { endLeftoverGroups, spawnGroup } from '../harness/process-groups.ts';
import { repositoryRoot, userPath } from '../harness/plugin.ts';
import { eventually, pending } from '../integration/controller/operator.ts';
import { auditFigure, unexpectedWarnings, warningsOf, type ExpectedWarning } from './log-audit.ts';

const run = promisify(execFile);

/** The commands of the code blocks under "## Quick start", one a line, comments kept (bash drops them). */
export function quickStartCommands(readme: string): string[][] {
  const section = readme.split(/^## /m).find((part) => part.startsWith('Quick start')) ?? '';
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map(([, body = '']) =>
    body.split('\n').filter((line) => line.trim() !== ''),
  );
}

/** Commands of the first block this test does not run itself, and why. */
const NOT_RUN: Record<string, string> = {
  'npm ci': 'the test runs in the installed checkout',
  'npm test': 'it runs this very test',
};
/** Warnings a clean quick start logs and why each is expected; empty: none is. */
const EXPECTED_WARNINGS: readonly ExpectedWarning[] = [
  {
    msg: /^no EndpointSlice default\/kubernetes: the policies let no pod off the host network reach the API server \(said once, until a slice is seen\)$/,
    why:
      'the local control plane serves on loopback, which an EndpointSlice may not hold, so it keeps none; its ' +
      "sandbox pods reach the API server over the node's loopback (docs/security.md, network isolation)",
  },
];
const KUBECONFIG_LINE = /^export KUBECONFIG=\/tmp\/sandbox-operator-XXXXXX\/admin\.kubeconfig\b/;

async function bash(line: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('bash', ['-c', line], { cwd: repositoryRoot, env, timeout: 90_000 });
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

describe('the README quick start', () => {
  it.skipIf(inject('clusterKind') !== 'local')('works as printed', async () => {
    const [setup = [], session = []] = quickStartCommands(
      readFileSync(join(repositoryRoot, 'README.md'), 'utf8'),
    );
    const commandOf = (line: string) => line.replace(/#.*/, '').trim();
    expect(setup.map(commandOf)).toEqual(['npm ci', 'npm start', 'npm test']);
    for (const line of setup.map(commandOf)) if (line !== 'npm start') expect(NOT_RUN[line]).toBeDefined();

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: userPath(),
      SANDBOX_OPERATOR_PROBE_BIND: '127.0.0.1:0',
    };
    delete env['KUBECONFIG'];
    delete env['KUBERNETES_SERVICE_HOST'];
    const npm = spawnGroup('bash', ['-c', 'exec npm start'], {
      cwd: repositoryRoot,
      env,
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const kubeconfig = await eventually(
        'the banner',
        () =>
          Promise.resolve(
            /^ {2}export KUBECONFIG=(\/tmp\/sandbox-operator-\w{6}\/admin\.kubeconfig)$/m.exec(output)?.[1] ??
              pending({ output: output.slice(-600) }),
          ),
        180_000,
      );
      const userEnv: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: [dirname(inject('kubectl')), userPath()].join(delimiter),
        KUBECONFIG: kubeconfig,
      };
      const [first = '', ...rest] = session;
      expect(first).toMatch(KUBECONFIG_LINE); // the one line the user edits: the path npm start printed
      for (const line of rest) {
        const result = line.includes('kubectl sandbox why')
          ? // The operator decides within a moment of the delete; the user may have to look twice.
            await eventually(
              'the deletion blocked',
              async () => {
                const answer = await bash(line, userEnv);
                return answer.output.includes('BLOCKED') ? answer : pending({ why: answer.output });
              },
              60_000,
            )
          : await bash(line, userEnv);
        expect({ line, code: result.code, output: result.output }).toMatchObject({ line, code: 0 });
        if (line.includes('kubectl sandbox why')) {
          expect(result.output).toContain('Verdict:    Foreign (evidence: Index)');
          expect(result.output).toMatch(/Blocking references \(1\):\n.*\n {2}board-main /);
        }
      }
    } finally {
      process.kill(npm.pid ?? 0, 'SIGTERM'); // to npm alone, as a supervisor would
      await eventually(
        'npm start stopped',
        () =>
          Promise.resolve(/"msg":"stopped"/.test(output) ? true : pending({ output: output.slice(-600) })),
        60_000,
      );
    }
    expect(output).toMatch(/"msg":"operator stopped"[\s\S]*"msg":"local control plane stopped"/);
    // A clean run: every warning is one a person should act on, so none is expected here.
    const warnings = warningsOf(output);
    console.info(`the quick start's clean run logged ${auditFigure(warnings, EXPECTED_WARNINGS)}`);
    expect(unexpectedWarnings(warnings, EXPECTED_WARNINGS)).toEqual([]);
  });
});
