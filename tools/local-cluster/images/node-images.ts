// The two images the real node needs, built locally (no registry): the pause image (the pod sandbox)
// compiled with `gcc -static` from build/pause/linux/pause.c of the pinned k8s.io/kubernetes module,
// and a small shell image from Debian's busybox-static (for examples and tests). Cached as
// docker-archive tars under <cache>/images/, keyed by their version.
import { access, chmod, copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { LocalClusterError } from '../errors.ts';
import { runStep, type BuildReporter } from '../run-step.ts';
import { TOOLS } from '../versions.ts';
import { writeDockerArchive } from './docker-archive.ts';

const run = promisify(execFile);

/** The pause release in the pinned module's build/pause/Makefile (TAG ?= ...). */
export const PAUSE_VERSION = '3.10.2';
export const PAUSE_IMAGE = `sandbox-operator.local/pause:${PAUSE_VERSION}`;
const BUSYBOX = '/bin/busybox';
export const SHELL_IMAGE_NAME = 'sandbox-operator.local/shell';

export interface LocalImage {
  readonly tag: string;
  readonly archive: string;
}

export function imagesDir(root: string): string {
  return join(root, 'images');
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function kubernetesModuleDir(report: BuildReporter, cwd: string): Promise<string> {
  const group = TOOLS.kubelet.group;
  const result = await runStep({
    subject: 'pause',
    version: PAUSE_VERSION,
    step: 'go mod download',
    command: 'go',
    args: ['mod', 'download', '-json', `${group.module}@${group.version}`],
    cwd,
    env: { ...process.env, GOWORK: 'off', GOFLAGS: '-mod=mod' },
    report,
    retryHint: 'Rerun the command; Go keeps finished downloads.',
  });
  const dir = (JSON.parse(result.stdout) as { Dir?: unknown }).Dir;
  if (typeof dir !== 'string')
    throw new LocalClusterError('build-step-failed', `no module directory for ${group.module}`, {
      subject: 'pause',
      step: 'go mod download',
      outputTail: result.stdout,
    });
  return dir;
}

/** The pause image: one static binary at /pause. */
export async function ensurePauseImage(root: string, report: BuildReporter): Promise<LocalImage> {
  const archive = join(imagesDir(root), `pause-${PAUSE_VERSION}-${TOOLS.kubelet.version}.tar`);
  if (await exists(archive)) return { tag: PAUSE_IMAGE, archive };
  const work = await mkdtemp(join(tmpdir(), 'sandbox-operator-pause-'));
  try {
    const moduleDir = await kubernetesModuleDir(report, work);
    const rootfs = join(work, 'rootfs');
    await mkdir(rootfs);
    await runStep({
      subject: 'pause',
      version: PAUSE_VERSION,
      step: 'gcc -static',
      command: 'gcc',
      args: [
        '-Os',
        '-Wall',
        '-static',
        `-DVERSION=v${PAUSE_VERSION}-${TOOLS.kubelet.version}`,
        '-o',
        join(rootfs, 'pause'),
        join(moduleDir, 'build/pause/linux/pause.c'),
      ],
      cwd: work,
      env: process.env,
      report,
      retryHint: 'Install gcc and the static C library (apt-get install gcc libc6-dev), then rerun.',
    });
    await run('strip', [join(rootfs, 'pause')]);
    await writeDockerArchive({
      tag: PAUSE_IMAGE,
      layers: [rootfs],
      config: { entrypoint: ['/pause'], user: '65535:65535' },
      out: archive,
      report,
    });
    return { tag: PAUSE_IMAGE, archive };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The version of the machine's busybox-static, which the shell image (and what is built on it) carries. */
export async function busyboxVersion(): Promise<string> {
  if (!(await exists(BUSYBOX)))
    throw new LocalClusterError('build-step-failed', `${BUSYBOX} is missing`, {
      subject: 'shell image',
      hint: 'apt-get install busybox-static',
    });
  const { stdout } = await run(BUSYBOX, ['--help']);
  const version = /BusyBox v(\d+\.\d+\.\d+)/.exec(stdout)?.[1];
  if (version === undefined)
    throw new LocalClusterError('build-step-failed', `${BUSYBOX} printed no version`, {
      subject: 'shell image',
      hint: 'apt-get install busybox-static',
    });
  return version;
}

/** A shell image: busybox-static with its applets linked, and a user 1000 for runAsNonRoot pods. */
export async function ensureShellImage(root: string, report: BuildReporter): Promise<LocalImage> {
  const tag = `${SHELL_IMAGE_NAME}:${await busyboxVersion()}`;
  const archive = join(imagesDir(root), `shell-${tag.split(':')[1] ?? ''}.tar`);
  if (await exists(archive)) return { tag, archive };
  const work = await mkdtemp(join(tmpdir(), 'sandbox-operator-shell-'));
  try {
    const rootfs = join(work, 'rootfs');
    await busyboxRootfs(rootfs);
    await writeDockerArchive({ tag, layers: [rootfs], config: { cmd: ['/bin/sh'] }, out: archive, report });
    return { tag, archive };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The shell image's root: busybox-static with its applets linked, /tmp, and a user 1000 (agent). */
export async function busyboxRootfs(rootfs: string): Promise<void> {
  await mkdir(join(rootfs, 'bin'), { recursive: true });
  await copyFile(BUSYBOX, join(rootfs, 'bin/busybox'));
  await chmod(join(rootfs, 'bin/busybox'), 0o755);
  const { stdout } = await run(BUSYBOX, ['--list-full']);
  for (const applet of stdout.split('\n').filter((line) => line !== '' && line !== 'bin/busybox')) {
    await mkdir(join(rootfs, dirname(applet)), { recursive: true });
    await symlink('/bin/busybox', join(rootfs, applet));
  }
  for (const dir of ['tmp', 'etc', 'home/agent', 'workspace'])
    await mkdir(join(rootfs, dir), { recursive: true });
  await chmod(join(rootfs, 'tmp'), 0o1777);
  await writeFile(
    join(rootfs, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/home/agent:/bin/sh\n',
  );
  await writeFile(join(rootfs, 'etc/group'), 'root:x:0:\nagent:x:1000:\n');
}
