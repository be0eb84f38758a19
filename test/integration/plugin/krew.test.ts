/**
 * The krew artifacts installed the way krew installs them: build the archives and manifest (npm run krew),
 * check each platform's sha256 and file list against its archive, unpack it into a store directory, link the
 * manifest's `bin` into a bin directory, and run `kubectl sandbox-operator` from there against the cluster,
 * with neither the repository nor node_modules on PATH. The self-contained archive of this platform runs
 * with no node on PATH at all; the portable one with the machine's own node.
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
      selector: {
        matchLabels?: Record<string, string>;
        matchExpressions?: { key: string; operator: string; values: string[] }[];
      };
      uri: string;
      sha256: string;
      files: { from: string; to: string }[];
      bin: string;
    }[];
  };
};

let home: string;
let manifest: Manifest;
const out = join(repositoryRoot, 'dist', 'krew');
const archiveOf = (platform: Manifest['spec']['platforms'][number]) =>
  join(out, platform.uri.slice(platform.uri.lastIndexOf('/') + 1));
const HOST = { os: 'linux', arch: 'amd64' }; // this machine (CI runs here)

beforeAll(async () => {
  await run(process.execPath, [join(repositoryRoot, 'scripts', 'krew-package.mjs')], { cwd: repositoryRoot });
  manifest = parseYaml(await readFile(join(out, 'sandbox-operator.yaml'), 'utf8')) as Manifest;
  home = await mkdtemp(join(tmpdir(), 'krew-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('the krew plugin', () => {
  it('has a specific name, and a manifest whose every platform matches its archive', async () => {
    expect(manifest.metadata.name).toBe('sandbox-operator');
    expect(manifest.spec.platforms.map((p) => p.selector)).toEqual([
      { matchLabels: HOST },
      { matchExpressions: [{ key: 'os', operator: 'In', values: ['linux', 'darwin'] }] },
    ]);
    for (const platform of manifest.spec.platforms) {
      const archive = await readFile(archiveOf(platform));
      expect(platform.sha256).toBe(createHash('sha256').update(archive).digest('hex'));
      const { stdout } = await run('tar', ['-tzf', archiveOf(platform)]);
      const entries = stdout.split('\n').map((entry) => entry.replace(/^\.\//, ''));
      for (const file of platform.files) expect(entries).toContain(file.from);
      expect(entries).toContain(platform.bin);
    }
    expect(manifest.spec.platforms[0]?.files.map((f) => f.from)).toContain('node');
  });

  /** Unpacks a platform's archive into krew's store, links its bin, and runs the plugin with `path`. */
  async function installAndRun(
    platform: Manifest['spec']['platforms'][number],
    name: string,
    path: string[],
  ) {
    const store = join(home, name, 'store', manifest.metadata.name, manifest.spec.version);
    const bin = join(home, name, 'bin');
    await mkdir(store, { recursive: true });
    await mkdir(bin, { recursive: true });
    await run('tar', ['-xzf', archiveOf(platform), '-C', store]);
    await symlink(join(store, platform.bin), join(bin, platform.bin));
    const env = {
      ...process.env,
      KUBECONFIG: inject('kubeconfig'),
      PATH: [dirname(inject('kubectl')), bin, ...path].join(delimiter),
    };
    expect(env.PATH).not.toContain(repositoryRoot);
    const plugins = await run('kubectl', ['plugin', 'list'], { env });
    expect(plugins.stdout).toContain(join(bin, 'kubectl-sandbox_operator'));
    const { stdout } = await run('kubectl', ['sandbox-operator', 'why', '-A', '-o', 'json'], { env });
    expect(JSON.parse(stdout)).toMatchObject({
      apiVersion: 'kubectl-sandbox.sandbox.agents.dev/v1alpha1',
      kind: 'SandboxDeletionList',
    });
  }

  it('runs self-contained as krew installs it, with no Node.js on the machine’s PATH', async () => {
    const [platform] = manifest.spec.platforms;
    if (platform === undefined) throw new Error('no platform in the manifest');
    // Only what the launcher needs (sh, dirname, readlink), and no node among it.
    const tools = join(home, 'tools');
    await mkdir(tools, { recursive: true });
    for (const tool of ['sh', 'dirname', 'readlink']) {
      const { stdout } = await run('sh', ['-c', `command -v ${tool}`]);
      await symlink(stdout.trim(), join(tools, tool));
    }
    await expect(run('sh', ['-c', 'command -v node'], { env: { PATH: tools } })).rejects.toThrow();
    await installAndRun(platform, 'self-contained', [tools]);
  });

  it('runs portable on the node on PATH, as krew installs it elsewhere', async () => {
    const portable = manifest.spec.platforms[1];
    if (portable === undefined) throw new Error('no portable platform in the manifest');
    await installAndRun(portable, 'portable', [userPath()]);
  });
});
