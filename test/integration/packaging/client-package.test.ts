/**
 * The client as a platform team installs it: `npm pack` the package @sandbox-operator/client (clients/typescript),
 * install the tarball alone into a fresh project (offline, from a lockfile pinning what the repository's
 * lockfile pins for the package's own dependencies and theirs, nothing of the operator's), copy the example
 * out of the repository, type-check it against the package's own .d.ts through `exports`, and run it against
 * the local control plane: attach, detach, prune, forget; and the fence, refused and withdrawn, on a sandbox
 * being deleted.
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
const packageDir = join(root, 'clients', 'typescript');
const NAME = '@sandbox-operator/client';
const ns = testNamespace('client-pkg');
let project: string;
let tarballFiles: string[];

type LockEntry = {
  version?: string;
  dev?: boolean;
  link?: boolean;
  resolved?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};
type Lock = { packages: Record<string, LockEntry> };
type Manifest = { version: string; dependencies: Record<string, string> };

const manifest = async (): Promise<Manifest> =>
  JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as Manifest;

/**
 * The entries of the repository's lockfile that `dependencies` need, theirs included, found as Node finds
 * them: the nearest node_modules/<name> from the dependent's own folder up.
 */
function lockClosure(lock: Lock, dependencies: readonly string[]): Record<string, LockEntry> {
  const found: Record<string, LockEntry> = {};
  const visit = (name: string, from: string, optional: boolean): void => {
    for (let base = from; ; base = base.replace(/\/?node_modules\/(@[^/]+\/)?[^/]+$/, '')) {
      const path = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
      const entry = lock.packages[path];
      if (entry !== undefined) {
        if (path in found) return;
        const resolved =
          entry.resolved ??
          `https://registry.npmjs.org/${name}/-/${name.split('/').at(-1) ?? ''}-${entry.version ?? ''}.tgz`;
        found[path] = { ...entry, resolved };
        for (const dependency of Object.keys(entry.dependencies ?? {})) visit(dependency, path, false);
        for (const dependency of Object.keys(entry.optionalDependencies ?? {})) visit(dependency, path, true);
        for (const dependency of Object.keys(entry.peerDependencies ?? {}))
          visit(dependency, path, entry.peerDependenciesMeta?.[dependency]?.optional === true);
        return;
      }
      if (base === '') {
        if (optional) return; // another platform's build, absent from this lockfile
        throw new Error(`${name}, needed by ${from || 'the package'}, is not in package-lock.json`);
      }
    }
  };
  for (const dependency of dependencies) visit(dependency, '', false);
  return found;
}

/**
 * The fresh project's lockfile: the tarball, and what its dependencies need at the repository's locked versions
 * and integrity, so `npm ci --offline` installs them from npm's cache and nothing is fetched.
 */
async function lockfileFor(tarball: string, integrity: string): Promise<object> {
  const repo = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as Lock;
  const pkg = await manifest();
  return {
    name: 'agent-host',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'agent-host', version: '1.0.0', dependencies: { [NAME]: `file:${tarball}` } },
      [`node_modules/${NAME}`]: {
        version: pkg.version,
        resolved: `file:${tarball}`,
        integrity,
        dependencies: pkg.dependencies,
      },
      ...lockClosure(repo, Object.keys(pkg.dependencies)),
    },
  };
}

/** The example as a platform team starts from it, copied out of the repository (as the Python client's test does). */
const example = () => join(project, 'agent-host.ts');

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
  // The package's prepack builds it (tsc of operator/client and what it imports).
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', project], {
    cwd: packageDir,
    timeout: 280_000,
  });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  tarballFiles = (packed?.files ?? []).map((file) => file.path).sort();
  const tarball = packed?.filename ?? '';
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
      dependencies: { [NAME]: `file:${tarball}` },
    }),
  );
  await writeFile(join(project, 'package-lock.json'), JSON.stringify(await lockfileFor(tarball, integrity)));
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: project,
    timeout: 120_000,
  });
  await copyFile(join(root, 'examples', 'agent-host', 'agent-host.ts'), example());
}, 300_000);
afterAll(async () => {
  await releaseHeldDeletion(ns, 'deleting');
  await rm(project, { recursive: true, force: true });
});

describe('@sandbox-operator/client, packed and installed alone in a fresh project', () => {
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
        `const c = await import('${NAME}'); console.log(Object.keys(c).sort().join(','))`,
      ],
      { cwd: project },
    );
    expect(stdout.trim().split(',')).toEqual(
      expect.arrayContaining(['SessionReferences', 'SandboxDeletingError', 'KubeConfig']),
    );
    const internal = run(
      process.execPath,
      ['--input-type=module', '--eval', `await import('${NAME}/dist/kube/errors.js')`],
      { cwd: project },
    );
    await expect(internal).rejects.toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it('carries the client and what it imports, nothing else of the product (issues 24, 30)', () => {
    expect(tarballFiles).toContain('dist/client/index.js');
    expect(tarballFiles).toContain('dist/client/index.d.ts');
    // Only the client's own folder and the two it may import (lint zones), compiled, beside the package's
    // manifest, README, changelog and licence; never the controller, the sidecar, the CLI, the local control
    // plane, the api's CRD generator, sources or source maps.
    expect(
      tarballFiles.filter((file) => !/^dist\/(client|api|kube)\/[a-z-]+\.(js|d\.ts)$/.test(file)),
    ).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json']);
    expect(tarballFiles).not.toContain('dist/api/generate-crds.js');
  });

  it('declares as dependencies exactly what its code imports, and installs nothing of the operator', async () => {
    const installed = join(project, 'node_modules', ...NAME.split('/'));
    const imported = new Set<string>();
    for (const file of tarballFiles.filter((path) => path.endsWith('.js'))) {
      const text = await readFile(join(installed, file), 'utf8');
      for (const [, specifier = ''] of text.matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g)) {
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        imported.add(
          specifier
            .split('/')
            .slice(0, specifier.startsWith('@') ? 2 : 1)
            .join('/'),
        );
      }
    }
    const declared = Object.keys((await manifest()).dependencies).sort();
    expect([...imported].sort()).toEqual(declared);
    // The operator's own dependencies that the client does not import stay out of the project.
    const operator = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Manifest;
    const present = await readdir(join(project, 'node_modules'));
    const operatorOnly = Object.keys(operator.dependencies).filter((name) => !declared.includes(name));
    expect(operatorOnly.length).toBeGreaterThan(0);
    expect(operatorOnly.filter((name) => present.includes(name))).toEqual([]);
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
