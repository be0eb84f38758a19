/**
 * The client as a platform team installs it: `npm pack` the repository, install the tarball into a fresh
 * project (offline, from a lockfile pinning what the repository's lockfile pins), copy the packaged example
 * out, type-check it against the package's own .d.ts through `exports`, and run it against the local control
 * plane: attach, detach, prune, forget; and the fence, refused and withdrawn, on a sandbox being deleted.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GROUP, SESSION_REFERENCE } from '../../../operator/api/names.ts';
import { kubectlOk, testNamespace } from '../../harness/kube.ts';
import { sandboxManifest } from '../controller/fixtures.ts';
import { heldDeletion, releaseHeldDeletion } from './held-deletion.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
const ns = testNamespace('client-pkg');
let project: string;

type Lock = {
  packages: Record<string, { version?: string; dev?: boolean; link?: boolean; resolved?: string }>;
};

/**
 * The fresh project's lockfile: the tarball, and the repository's production packages at their locked
 * versions and integrity, so `npm ci --offline` installs them from npm's cache and nothing is fetched.
 */
async function lockfileFor(tarball: string, integrity: string): Promise<object> {
  const repo = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as Lock;
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  const packages: Record<string, object> = {
    '': { name: 'agent-host', version: '1.0.0', dependencies: { 'sandbox-operator': `file:${tarball}` } },
    'node_modules/sandbox-operator': {
      version: pkg['version'],
      resolved: `file:${tarball}`,
      integrity,
      dependencies: pkg['dependencies'],
    },
  };
  for (const [path, entry] of Object.entries(repo.packages)) {
    if (!path.startsWith('node_modules/') || entry.dev === true || entry.link === true) continue;
    const name = path.split('node_modules/').at(-1) ?? '';
    const resolved =
      entry.resolved ??
      `https://registry.npmjs.org/${name}/-/${name.split('/').at(-1) ?? ''}-${entry.version ?? ''}.tgz`;
    packages[path] = { ...entry, resolved };
  }
  return { name: 'agent-host', version: '1.0.0', lockfileVersion: 3, requires: true, packages };
}

/** The example as a platform team starts from it, copied out of the package (Node strips types only outside node_modules). */
const example = () => join(project, 'agent-host.ts');
const packagedExample = () =>
  join(project, 'node_modules', 'sandbox-operator', 'examples', 'agent-host', 'agent-host.ts');

async function runExample(sandbox: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const kubeconfig = inject('kubeconfig');
  try {
    const { stdout, stderr } = await run(process.execPath, [example(), ns, sandbox, 'wt-1'], {
      cwd: project,
      env: { ...process.env, KUBECONFIG: kubeconfig },
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
    items: { metadata: { name: string }; spec: { session: string; state: string } }[];
  };

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'agent-host-'));
  await run('npm', ['pack', '--pack-destination', project], { cwd: root, timeout: 280_000 });
  const [tarball = ''] = (await readdir(project)).filter((file) => file.endsWith('.tgz'));
  const integrity = `sha512-${createHash('sha512')
    .update(await readFile(join(project, tarball)))
    .digest('base64')}`;
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'agent-host',
      version: '1.0.0',
      private: true,
      type: 'module',
      dependencies: { 'sandbox-operator': `file:${tarball}` },
    }),
  );
  await writeFile(join(project, 'package-lock.json'), JSON.stringify(await lockfileFor(tarball, integrity)));
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: project,
    timeout: 120_000,
  });
  await copyFile(packagedExample(), example());
}, 300_000);
afterAll(async () => {
  await releaseHeldDeletion(ns, 'deleting');
  await rm(project, { recursive: true, force: true });
});

describe('sandbox-operator/client, packed and installed in a fresh project', () => {
  it('exposes only the client entry point, with types', async () => {
    const tsconfig = {
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2024',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true,
      },
      files: [example()],
    };
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    await run(join(root, 'node_modules', '.bin', 'tsc'), ['-p', project], { cwd: project });
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '--eval',
        "const c = await import('sandbox-operator/client'); console.log(Object.keys(c).sort().join(','))",
      ],
      { cwd: project },
    );
    expect(stdout.trim().split(',')).toEqual(
      expect.arrayContaining(['SessionReferences', 'SandboxDeletingError', 'KubeConfig']),
    );
    const internal = run(
      process.execPath,
      [
        '--input-type=module',
        '--eval',
        "await import('sandbox-operator/dist/client/operator/kube/errors.js')",
      ],
      { cwd: project },
    );
    await expect(internal).rejects.toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it('carries the client and what it imports, nothing else of the product (issue 24)', async () => {
    const installed = join(project, 'node_modules', 'sandbox-operator');
    const code = (await readdir(installed, { recursive: true }))
      .filter((file) => file.endsWith('.js'))
      .map((file) => file.replace(/^dist\/client\/operator\//, ''));
    expect(code).toContain('client/index.js');
    // Only the client's own folder and the two it may import (lint zones); never the controller, the
    // sidecar, the CLI, the local control plane, or the api's CRD generator.
    expect(code.filter((file) => !/^(client|api|kube)\/[a-z-]+\.js$/.test(file))).toEqual([]);
    expect(code).not.toContain('api/generate-crds.js');
  });

  it('runs the example: attach, detach, prune and forget leave no reference behind', async () => {
    await kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify(sandboxManifest(ns, 'shared', { worktree: 'wt-1' })),
    });
    const result = await runExample('shared');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^attached workspace_1 to .*\/shared as SessionReference shared-[0-9a-f]{16}$/m,
    );
    expect(result.stdout).toContain('detached workspace_2');
    expect(result.stdout).toMatch(/pruned 1 tombstone\(s\) of worktree wt-1: shared-[0-9a-f]{16}/);
    expect(result.stdout).toContain('forgot workspace_1: Forgotten');
    expect((await references()).items).toEqual([]);
  });

  it('runs the example against a sandbox being deleted: refused, exit 3, the reference withdrawn', async () => {
    await heldDeletion(ns, 'deleting');
    const result = await runExample('deleting');
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`refused: sandbox ${ns}/deleting is being deleted`);
    expect((await references()).items).toEqual([]);
  });
});
