// The kubectl plugin as krew distributes it: `node scripts/krew-package.mjs` (npm run krew) writes
// dist/krew/kubectl-sandbox-operator.tar.gz — the one-file bundle, a POSIX sh launcher named as krew's `bin`,
// the LICENSE — and dist/krew/sandbox-operator.yaml, the krew manifest with that archive's sha256.
// krew installs it as `kubectl sandbox-operator` (krew's naming guide asks for a specific name; `sandbox`
// is generic and kubernetes-sigs/agent-sandbox is a likely neighbour). The launcher needs Node.js >= 20 on
// PATH; a Node-free artifact (a single executable) is not built yet.
// Test a local install: kubectl krew install --manifest=dist/krew/sandbox-operator.yaml \
//   --archive=dist/krew/kubectl-sandbox-operator.tar.gz
/* global process, URL */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { BUNDLE, bundlePlugin, ROOT } from './bundle-plugin.mjs';

export const KREW_NAME = 'sandbox-operator';
export const KREW_BIN = 'kubectl-sandbox_operator';
export const ARCHIVE = 'kubectl-sandbox-operator.tar.gz';
const OUT = new URL('../dist/krew/', import.meta.url);

const LAUNCHER = `#!/bin/sh
# kubectl sandbox-operator: runs the bundled plugin beside this file with the node on PATH (>= 20).
here=$(dirname "$(readlink -f "$0" 2>/dev/null || echo "$0")")
if ! command -v node >/dev/null 2>&1; then
  echo 'error: kubectl sandbox-operator needs Node.js >= 20 on PATH' >&2
  exit 1
fi
exec node "$here/kubectl-sandbox.mjs" "$@"
`;

export async function krewPackage() {
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
  await bundlePlugin();
  const stage = new URL('stage/', OUT);
  await rm(OUT, { recursive: true, force: true });
  await mkdir(stage, { recursive: true });
  await copyFile(new URL(`../${BUNDLE}`, import.meta.url), new URL('kubectl-sandbox.mjs', stage));
  await copyFile(new URL('../LICENSE', import.meta.url), new URL('LICENSE', stage));
  await writeFile(new URL(KREW_BIN, stage), LAUNCHER);
  await chmod(new URL(KREW_BIN, stage), 0o755);
  // Reproducible: sorted names, fixed times and owners, gzip without a timestamp.
  const tar = execFileSync('tar', [
    '--sort=name',
    '--mtime=@0',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '-C',
    stage.pathname,
    '-cf',
    '-',
    '.',
  ]);
  const archive = execFileSync('gzip', ['-n', '-9'], { input: tar, maxBuffer: 64 * 1024 * 1024 });
  await writeFile(new URL(ARCHIVE, OUT), archive);
  await rm(stage, { recursive: true });
  const version = `v${pkg.version}`;
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
      caveats: 'Needs Node.js >= 20 on PATH.\n',
      platforms: [
        {
          selector: { matchExpressions: [{ key: 'os', operator: 'In', values: ['linux', 'darwin'] }] },
          uri: `https://github.com/sandbox-operator/sandbox-operator/releases/download/${version}/${ARCHIVE}`,
          sha256: createHash('sha256').update(archive).digest('hex'),
          files: [
            { from: KREW_BIN, to: '.' },
            { from: 'kubectl-sandbox.mjs', to: '.' },
            { from: 'LICENSE', to: '.' },
          ],
          bin: KREW_BIN,
        },
      ],
    },
  };
  await writeFile(new URL(`${KREW_NAME}.yaml`, OUT), stringify(manifest));
  return {
    archive: new URL(ARCHIVE, OUT).pathname,
    manifest: new URL(`${KREW_NAME}.yaml`, OUT).pathname,
    root: ROOT,
  };
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const { archive, manifest } = await krewPackage();
  process.stdout.write(`wrote ${manifest}\nwrote ${archive}\n`);
}
