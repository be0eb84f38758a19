/**
 * The krew artifact installed the way krew installs it: build the archive and manifest (npm run krew), check
 * the manifest's sha256 and file list against the archive, unpack it into a store directory, link the
 * manifest's `bin` into a bin directory, and run `kubectl sandbox-operator` from there against the cluster,
 * with neither the repository nor node_modules on PATH (only the machine's own node).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repositoryRoot, userPath } from '../../harness/plugin.ts';

const run = promisify(execFile);
type Manifest = {
  metadata: { name: string };
  spec: {
    version: string;
    platforms: {
      selector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
      sha256: string;
      files: { from: string; to: string }[];
      bin: string;
    }[];
  };
};

let home: string;
let manifest: Manifest;
let archive: Buffer;

beforeAll(async () => {
  await run(process.execPath, [join(repositoryRoot, 'scripts', 'krew-package.mjs')], { cwd: repositoryRoot });
  const out = join(repositoryRoot, 'dist', 'krew');
  manifest = parseYaml(await readFile(join(out, 'sandbox-operator.yaml'), 'utf8')) as Manifest;
  archive = await readFile(join(out, 'kubectl-sandbox-operator.tar.gz'));
  home = await mkdtemp(join(tmpdir(), 'krew-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('the krew plugin', () => {
  it('has a specific name, and a manifest that matches its archive', async () => {
    expect(manifest.metadata.name).toBe('sandbox-operator');
    const [platform] = manifest.spec.platforms;
    expect(platform?.sha256).toBe(createHash('sha256').update(archive).digest('hex'));
    expect(platform?.selector.matchExpressions[0]?.values).toContain('linux');
    const { stdout } = await run('tar', [
      '-tzf',
      join(repositoryRoot, 'dist', 'krew', 'kubectl-sandbox-operator.tar.gz'),
    ]);
    const entries = stdout.split('\n').map((entry) => entry.replace(/^\.\//, ''));
    for (const file of platform?.files ?? []) expect(entries).toContain(file.from);
    expect(entries).toContain(platform?.bin);
  });

  it('runs as krew installs it: unpacked into its store, its bin linked onto PATH', async () => {
    const [platform] = manifest.spec.platforms;
    if (platform === undefined) throw new Error('no platform in the manifest');
    const store = join(home, 'store', manifest.metadata.name, manifest.spec.version);
    const bin = join(home, 'bin');
    await mkdir(store, { recursive: true });
    await mkdir(bin, { recursive: true });
    await run('tar', [
      '-xzf',
      join(repositoryRoot, 'dist', 'krew', 'kubectl-sandbox-operator.tar.gz'),
      '-C',
      store,
    ]);
    await symlink(join(store, platform.bin), join(bin, platform.bin));
    const env = {
      ...process.env,
      KUBECONFIG: inject('kubeconfig'),
      PATH: [dirname(inject('kubectl')), bin, userPath()].join(delimiter),
    };
    expect(env.PATH).not.toContain(repositoryRoot);
    const plugins = await run('kubectl', ['plugin', 'list'], { env });
    expect(plugins.stdout).toContain(join(bin, 'kubectl-sandbox_operator'));
    const { stdout } = await run('kubectl', ['sandbox-operator', 'why', '-A', '-o', 'json'], { env });
    expect(JSON.parse(stdout)).toMatchObject({
      apiVersion: 'kubectl-sandbox.sandbox.agents.dev/v1alpha1',
      kind: 'SandboxDeletionList',
    });
  });
});
