// The kubectl plugin as krew distributes it: `node scripts/krew-package.mjs` (npm run krew) writes, in
// dist/krew/, the krew manifest sandbox-operator.yaml and its archives:
// - kubectl-sandbox-operator-<os>-<arch>.tar.gz: self-contained — the one-file bundle, the pinned Node.js
//   runtime it runs on (the devDependency `node`, so the user's machine needs no Node at all), a POSIX sh
//   launcher named as krew's `bin`, the LICENSE. Built for this machine's platform; `--all-platforms` also
//   fetches the runtime of linux/darwin on amd64/arm64 from the npm registry (`node-<os>-<arch>` packages).
// - kubectl-sandbox-operator.tar.gz: the same bundle on the node on PATH (>= 20), for any other platform.
// krew picks the first platform whose selector matches, so the self-contained archives come first.
// krew installs it as `kubectl sandbox-operator` (krew's naming guide asks for a specific name; `sandbox`
// is generic and kubernetes-sigs/agent-sandbox is a likely neighbour).
// Test a local install: kubectl krew install --manifest=dist/krew/sandbox-operator.yaml \
//   --archive=dist/krew/kubectl-sandbox-operator-linux-amd64.tar.gz
/* global process, URL */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { BUNDLE, bundlePlugin, ROOT } from './bundle-plugin.mjs';

export const KREW_NAME = 'sandbox-operator';
export const KREW_BIN = 'kubectl-sandbox_operator';
export const ARCHIVE = 'kubectl-sandbox-operator.tar.gz';
export const runtimeArchive = (os, arch) => `kubectl-sandbox-operator-${os}-${arch}.tar.gz`;
const OUT = new URL('../dist/krew/', import.meta.url);

/** krew's os/arch and Node's platform/arch, for the runtimes the npm registry carries. */
const RUNTIMES = [
  { os: 'linux', arch: 'amd64', node: 'linux-x64' },
  { os: 'linux', arch: 'arm64', node: 'linux-arm64' },
  { os: 'darwin', arch: 'amd64', node: 'darwin-x64' },
  { os: 'darwin', arch: 'arm64', node: 'darwin-arm64' },
];

const HERE = `here=$(dirname "$(readlink -f "$0" 2>/dev/null || echo "$0")")`;

const PATH_LAUNCHER = `#!/bin/sh
# kubectl sandbox-operator: runs the bundled plugin beside this file with the node on PATH (>= 20).
${HERE}
if ! command -v node >/dev/null 2>&1; then
  echo 'error: kubectl sandbox-operator needs Node.js >= 20 on PATH' >&2
  exit 1
fi
exec node "$here/kubectl-sandbox.mjs" "$@"
`;

const RUNTIME_LAUNCHER = `#!/bin/sh
# kubectl sandbox-operator: runs the bundled plugin on the Node.js runtime shipped beside it.
${HERE}
exec "$here/node" "$here/kubectl-sandbox.mjs" "$@"
`;

/** A reproducible gzipped tar of `files` (name -> [source URL or text, mode]): sorted, fixed times and owners. */
async function archiveOf(files) {
  const stage = await mkdtemp(join(tmpdir(), 'krew-stage-'));
  try {
    for (const [name, { from, text, mode }] of Object.entries(files)) {
      if (text !== undefined) await writeFile(join(stage, name), text);
      else await copyFile(from, join(stage, name));
      await chmod(join(stage, name), mode);
    }
    const tar = execFileSync(
      'tar',
      [
        '--sort=name',
        '--mtime=@0',
        '--owner=0',
        '--group=0',
        '--numeric-owner',
        '-C',
        stage,
        '-cf',
        '-',
        '.',
      ],
      { maxBuffer: 512 * 1024 * 1024 },
    );
    return execFileSync('gzip', ['-n', '-6'], { input: tar, maxBuffer: 512 * 1024 * 1024 });
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/** The pinned runtime's binary for `runtime`: the devDependency's own on this platform, else the registry's. */
async function runtimeBinary(runtime, version, scratch) {
  if (runtime.node === `${process.platform}-${process.arch}`) {
    const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
    const found = execFileSync(pinned, ['--version']).toString().trim();
    if (found !== `v${version}`)
      throw new Error(`krew: ${pinned} is ${found}, not the pinned ${version}: npm ci`);
    return pinned;
  }
  const dir = join(scratch, runtime.node);
  await mkdir(dir, { recursive: true });
  const tgz = execFileSync('npm', ['pack', `node-${runtime.node}@${version}`, '--silent'], { cwd: dir })
    .toString()
    .trim();
  execFileSync('tar', ['-xzf', tgz, '-C', dir]);
  return join(dir, 'package', 'bin', 'node');
}

const platformEntry = (selector, uri, archive, runtime) => ({
  selector,
  uri,
  sha256: createHash('sha256').update(archive).digest('hex'),
  files: [
    { from: KREW_BIN, to: '.' },
    { from: 'kubectl-sandbox.mjs', to: '.' },
    ...(runtime ? [{ from: 'node', to: '.' }] : []),
    { from: 'LICENSE', to: '.' },
  ],
  bin: KREW_BIN,
});

export async function krewPackage({ allPlatforms = false } = {}) {
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
  const nodeVersion = pkg.devDependencies.node;
  await bundlePlugin();
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const version = `v${pkg.version}`;
  const release = `https://github.com/sandbox-operator/sandbox-operator/releases/download/${version}`;
  const common = {
    'kubectl-sandbox.mjs': { from: new URL(`../${BUNDLE}`, import.meta.url), mode: 0o644 },
    LICENSE: { from: new URL('../LICENSE', import.meta.url), mode: 0o644 },
  };
  const platforms = [];
  const written = [];
  const shipped = [];
  const scratch = await mkdtemp(join(tmpdir(), 'krew-runtimes-'));
  try {
    const host = `${process.platform}-${process.arch}`;
    for (const runtime of RUNTIMES.filter((r) => allPlatforms || r.node === host)) {
      const archive = await archiveOf({
        ...common,
        [KREW_BIN]: { text: RUNTIME_LAUNCHER, mode: 0o755 },
        node: { from: await runtimeBinary(runtime, nodeVersion, scratch), mode: 0o755 },
      });
      const name = runtimeArchive(runtime.os, runtime.arch);
      await writeFile(new URL(name, OUT), archive);
      written.push(new URL(name, OUT).pathname);
      shipped.push(`${runtime.os}/${runtime.arch}`);
      const selector = { matchLabels: { os: runtime.os, arch: runtime.arch } };
      platforms.push(platformEntry(selector, `${release}/${name}`, archive, true));
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const portable = await archiveOf({ ...common, [KREW_BIN]: { text: PATH_LAUNCHER, mode: 0o755 } });
  await writeFile(new URL(ARCHIVE, OUT), portable);
  written.push(new URL(ARCHIVE, OUT).pathname);
  const anyUnix = { matchExpressions: [{ key: 'os', operator: 'In', values: ['linux', 'darwin'] }] };
  platforms.push(platformEntry(anyUnix, `${release}/${ARCHIVE}`, portable, false));
  const manifest = {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: KREW_NAME },
    spec: {
      version,
      homepage: 'https://github.com/sandbox-operator/sandbox-operator',
      shortDescription: 'Show why a shared agent sandbox is kept and who references it',
      description:
        'Answers questions about sandbox-operator Sandboxes (sandbox.agents.dev): which SessionReferences ' +
        'use a sandbox and which are foreign to its worktree, why its deletion is blocked and what ends the ' +
        'wait, and what the shell reaper retired for a session. Reads through kubectl, so its global flags apply.',
      caveats: `Ships its own Node.js ${nodeVersion} runtime on ${shipped.join(', ')}; elsewhere it needs Node.js >= 20 on PATH.\n`,
      platforms,
    },
  };
  await writeFile(new URL(`${KREW_NAME}.yaml`, OUT), stringify(manifest));
  return { archives: written, manifest: new URL(`${KREW_NAME}.yaml`, OUT).pathname, root: ROOT };
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const { archives, manifest } = await krewPackage({
    allPlatforms: process.argv.includes('--all-platforms'),
  });
  process.stdout.write(`wrote ${manifest}\n${archives.map((a) => `wrote ${a}\n`).join('')}`);
}
