/**
 * The Python client as a platform team installs it: a wheel and an sdist built by PyPA's `build`, each
 * installed with pip into a fresh virtual environment (the sdist built from source there), the example agent
 * host copied out of the repository, type-checked with mypy --strict against the installed package, and run
 * against the local control plane, blocking and asyncio: attach, detach, prune, forget; and the fence,
 * refused and withdrawn, on a sandbox being deleted. The twin of client-package.test.ts.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GROUP, SESSION_REFERENCE } from '../../../operator/api/names.ts';
import { kubectlOk, testNamespace } from '../../harness/kube.ts';
import { sandboxManifest } from '../controller/fixtures.ts';
import { heldDeletion, releaseHeldDeletion } from './held-deletion.ts';
import { preparePython } from '../conformance/drivers.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
const devPython = join(root, 'clients', 'python', '.venv', 'bin', 'python');
const ns = testNamespace('py-client-pkg');
let work: string;
const venv = (name: 'wheel' | 'sdist') => join(work, name, 'bin', 'python');
const example = () => join(work, 'agent_host.py');

async function installInFreshVenv(name: 'wheel' | 'sdist', artifact: string): Promise<void> {
  await run(process.env['PYTHON'] ?? 'python3', ['-m', 'venv', join(work, name)], { timeout: 120_000 });
  await run(venv(name), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', artifact], {
    timeout: 280_000,
  });
}

async function runExample(
  python: string,
  sandbox: string,
  ...flags: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(python, [example(), ns, sandbox, 'wt-1', ...flags], {
      cwd: work,
      env: { ...process.env, KUBECONFIG: inject('kubeconfig') },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const references = async () =>
  JSON.parse(await kubectlOk(['get', `${SESSION_REFERENCE.plural}.${GROUP}`, '-n', ns, '-o', 'json'])) as {
    items: { metadata: { name: string } }[];
  };

const listing = async (python: string, artifact: string, kind: 'zip' | 'tar') =>
  (
    await run(python, [
      '-c',
      kind === 'zip'
        ? 'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))'
        : 'import sys, tarfile; print("\\n".join(tarfile.open(sys.argv[1]).getnames()))',
      artifact,
    ])
  ).stdout.split('\n');

let wheel: string;
let sdist: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'agent-host-python-'));
  await preparePython(); // the pinned `build` and mypy live in clients/python/.venv
  const dist = join(work, 'dist');
  await run(
    devPython,
    ['-m', 'build', '--sdist', '--wheel', '--outdir', dist, join(root, 'clients', 'python')],
    {
      timeout: 280_000,
    },
  );
  const built = await readdir(dist);
  wheel = join(dist, built.find((file) => file.endsWith('.whl')) ?? 'no wheel built');
  sdist = join(dist, built.find((file) => file.endsWith('.tar.gz')) ?? 'no sdist built');
  await Promise.all([installInFreshVenv('wheel', wheel), installInFreshVenv('sdist', sdist)]);
  await copyFile(join(root, 'examples', 'agent-host-python', 'agent_host.py'), example());
}, 600_000);
afterAll(async () => {
  await releaseHeldDeletion(ns, 'deleting');
  await rm(work, { recursive: true, force: true });
});

describe('sandbox-operator-client, built and installed into fresh virtual environments', () => {
  it('ships the typed package alone in the wheel, and its sources in the sdist', async () => {
    const files = await listing(devPython, wheel, 'zip');
    expect(files).toEqual(
      expect.arrayContaining([
        'sandbox_operator_client/__init__.py',
        'sandbox_operator_client/py.typed',
        'sandbox_operator_client/_fence.py',
      ]),
    );
    expect(files.filter((file) => /(^|\/)tests?\//.test(file))).toEqual([]);
    const sources = await listing(devPython, sdist, 'tar');
    expect(sources.some((file) => file.endsWith('/pyproject.toml'))).toBe(true);
    expect(sources.some((file) => file.endsWith('/src/sandbox_operator_client/py.typed'))).toBe(true);
  });

  it('exposes the blocking and asyncio APIs, and the example type-checks against the installed package', async () => {
    const { stdout } = await run(
      venv('wheel'),
      ['-c', 'import sandbox_operator_client as c; print(",".join(c.__all__))'],
      {
        cwd: work,
      },
    );
    expect(stdout.trim().split(',')).toEqual(
      expect.arrayContaining([
        'SessionReferences',
        'AsyncSessionReferences',
        'SandboxDeletingError',
        'KubeRequestError',
      ]),
    );
    // mypy from the development environment, resolving imports in the fresh one: the installed py.typed is what it reads.
    await run(devPython, ['-m', 'mypy', '--strict', '--python-executable', venv('wheel'), example()], {
      cwd: work,
    });
  });

  for (const [installed, flags] of [
    ['wheel', []],
    ['sdist', ['--asyncio']],
  ] as const)
    it(`runs the example from the ${installed} (${flags.length === 0 ? 'blocking' : 'asyncio'}): attach, detach, prune and forget leave no reference behind`, async () => {
      const sandbox = `shared-${installed}`;
      await kubectlOk(['apply', '-f', '-'], {
        input: JSON.stringify(sandboxManifest(ns, sandbox, { worktree: 'wt-1' })),
      });
      const result = await runExample(venv(installed), sandbox, ...flags);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        new RegExp(
          `^attached workspace_1 to .*/${sandbox} as SessionReference ${sandbox}-[0-9a-f]{16}$`,
          'm',
        ),
      );
      expect(result.stdout).toContain('detached workspace_2');
      expect(result.stdout).toMatch(
        new RegExp(`pruned 1 tombstone\\(s\\) of worktree wt-1: ${sandbox}-[0-9a-f]{16}`),
      );
      expect(result.stdout).toContain('forgot workspace_1: Forgotten');
      expect((await references()).items).toEqual([]);
    });

  it('runs the example against a sandbox being deleted: refused, exit 3, the reference withdrawn', async () => {
    await heldDeletion(ns, 'deleting');
    for (const flags of [[], ['--asyncio']]) {
      const result = await runExample(venv('wheel'), 'deleting', ...flags);
      expect(result.code).toBe(3);
      expect(result.stderr).toContain(`refused: sandbox ${ns}/deleting is being deleted`);
      expect((await references()).items).toEqual([]);
    }
  });
});
