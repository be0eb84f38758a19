// The operator image, built from the repository's Dockerfile with buildah (Debian's), on the base image
// node-base.ts assembles under the tag the Dockerfile names, pinned by its digest (NODE_IMAGE=<tag>@sha256:…:
// buildah refuses any other image under that tag); no registry, no Docker. The result is a docker-archive
// tar cached under <cache>/images/, keyed by a hash of everything the Dockerfile copies, with its SBOM and
// provenance beside it (attestations.ts).
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { access, readdir, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { runStep, type BuildReporter } from '../run-step.ts';
import { attestationPaths, writeAttestations } from './attestations.ts';
import { DOCKERFILE, ensureNodeBase } from './node-base.ts';
import { imagesDir, type LocalImage } from './node-images.ts';

const run = promisify(execFile);
const REPO = dirname(DOCKERFILE);
/**
 * What the Dockerfile copies (see .dockerignore), and the recipe that builds it and writes its attestations;
 * a change to any of it is a new image.
 */
const INPUTS = [
  'tools/local-cluster/images/operator-image.ts',
  'tools/local-cluster/images/attestations.ts',
  'Dockerfile',
  '.dockerignore',
  'package.json',
  'package-lock.json',
  'tools/local-cluster/package.json',
  'clients/typescript/package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'operator',
  'crds',
  'scripts/bundle-plugin.mjs',
  'scripts/bundle-operator.mjs',
];
export const OPERATOR_IMAGE_NAME = 'sandbox-operator.local/sandbox-operator';

async function filesUnder(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const entries = await readdir(path, { withFileTypes: true });
  const nested = await Promise.all(entries.map((entry) => filesUnder(join(path, entry.name))));
  return nested.flat();
}

/** sha256 over the relative path and contents of every input, in a stable order. */
export async function inputsHash(repo: string = REPO): Promise<string> {
  const hash = createHash('sha256');
  const files = (await Promise.all(INPUTS.map((input) => filesUnder(join(repo, input))))).flat().sort();
  for (const file of files) {
    hash.update(`${relative(repo, file)}\0`);
    hash.update(await readFile(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The CA bundle and npm's global config of this machine, mounted read-only so `npm ci` trusts the same CAs. */
async function trustMounts(): Promise<string[]> {
  const mounts: string[] = [];
  // From the repository's root: in a workspace's directory (npm start's), `npm config` refuses to answer.
  const get = async (key: string): Promise<string> =>
    (await run('npm', ['config', 'get', key], { cwd: REPO })).stdout.trim();
  const cafile = await get('cafile');
  if (cafile !== '' && cafile !== 'null' && existsSync(cafile))
    mounts.push('--volume', `${cafile}:${cafile}:ro`);
  const globalconfig = await get('globalconfig');
  if (existsSync(globalconfig)) mounts.push('--volume', `${globalconfig}:/usr/local/etc/npmrc:ro`);
  return mounts;
}

async function allExist(paths: readonly string[]): Promise<boolean> {
  try {
    await Promise.all(paths.map((path) => access(path)));
    return true;
  } catch {
    return false;
  }
}

/** The digest buildah gave the base it pulled: what NODE_IMAGE pins. */
async function pulledDigest(tag: string): Promise<string> {
  const { stdout } = await run('buildah', [
    'inspect',
    '--type',
    'image',
    '--format',
    '{{.FromImageDigest}}',
    tag,
  ]);
  return stdout.trim();
}

export async function ensureOperatorImage(root: string, report: BuildReporter): Promise<LocalImage> {
  const hash = await inputsHash();
  const id = hash.slice(0, 12);
  const tag = `${OPERATOR_IMAGE_NAME}:dev-${id}`;
  const archive = join(imagesDir(root), `sandbox-operator-${id}.tar`);
  const { sbom, provenance } = attestationPaths(archive);
  // A tar without its SBOM and provenance (built before they were) is built again: buildah keeps the layers.
  if (await allExist([archive, sbom, provenance])) return { tag, archive };
  const base = await ensureNodeBase(root, report);
  const step = (name: string, args: readonly string[]) =>
    runStep({
      subject: 'operator image',
      version: id,
      step: name,
      command: 'buildah',
      args,
      cwd: REPO,
      env: process.env,
      report,
      retryHint: 'Rerun the command; buildah keeps the layers it finished.',
    });
  await step('buildah pull (the local base)', ['pull', '--quiet', `docker-archive:${base.archive}`]);
  const pinnedBase = `${base.tag}@${await pulledDigest(base.tag)}`;
  const startedOn = new Date();
  const bud = [
    'bud',
    '--network',
    'host',
    '--pull-never',
    '--layers',
    ...(await trustMounts()),
    '--build-arg',
    `NODE_IMAGE=${pinnedBase}`,
    '--build-arg',
    `REVISION=local-${id}`,
    '-t',
    tag,
    // Relative to the checkout (buildah runs there): the provenance names no machine's path, so an image
    // cached by one checkout is described truly to another (CI's clean clone reuses the cache).
    '-f',
    relative(REPO, DOCKERFILE),
    '.',
  ];
  await step('buildah bud (the Dockerfile)', bud);
  // Older builds of this cache go: one operator image is kept.
  for (const entry of await readdir(imagesDir(root)))
    if (entry.startsWith('sandbox-operator-') && /\.(tar|sbom\.cdx\.json|provenance\.json)$/.test(entry))
      await rm(join(imagesDir(root), entry), { force: true });
  const partial = `${archive}.partial-${process.pid}`;
  await step('buildah push (docker-archive)', ['push', '--quiet', tag, `docker-archive:${partial}:${tag}`]);
  await run('mv', [partial, archive]);
  await writeAttestations({
    repo: REPO,
    archive,
    tag,
    inputsHash: hash,
    base: pinnedBase,
    command: ['buildah', ...bud],
    startedOn,
    finishedOn: new Date(),
  });
  return { tag, archive };
}
