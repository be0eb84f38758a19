// A container image with no registry is a tar: a docker-archive (manifest.json, a config whose
// rootfs.diff_ids are the sha256 of each layer tar, the layer tars), which `ctr images import` and
// `buildah pull docker-archive:` both read. Layers are packed by the system's GNU tar, owned by root.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runStep, type BuildReporter } from '../run-step.ts';

export interface ImageConfig {
  readonly entrypoint?: readonly string[];
  readonly cmd?: readonly string[];
  readonly env?: readonly string[];
  readonly user?: string;
  readonly workingDir?: string;
  /** OCI labels, e.g. org.opencontainers.image.description: what `ctr images` and inspectors show. */
  readonly labels?: Readonly<Record<string, string>>;
}

export interface ArchiveSpec {
  /** e.g. `sandbox-operator.local/pause:3.10-v1.36.3` */
  readonly tag: string;
  /** Directories whose contents become the layers, bottom first. */
  readonly layers: readonly string[];
  readonly config: ImageConfig;
  readonly out: string;
  readonly report: BuildReporter;
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The image config JSON (pure): what `docker inspect` shows, with the layers' diff ids. */
export function imageConfigJson(config: ImageConfig, diffIds: readonly string[]): string {
  return JSON.stringify({
    architecture: 'amd64',
    os: 'linux',
    created: '1970-01-01T00:00:00Z',
    config: {
      ...(config.entrypoint === undefined ? {} : { Entrypoint: config.entrypoint }),
      ...(config.cmd === undefined ? {} : { Cmd: config.cmd }),
      Env: config.env ?? ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      ...(config.user === undefined ? {} : { User: config.user }),
      ...(config.workingDir === undefined ? {} : { WorkingDir: config.workingDir }),
      ...(config.labels === undefined ? {} : { Labels: config.labels }),
    },
    rootfs: { type: 'layers', diff_ids: diffIds.map((id) => `sha256:${id}`) },
    // One entry per layer: buildah counts them against the layers when it builds on top.
    history: diffIds.map(() => ({
      created: '1970-01-01T00:00:00Z',
      created_by: 'operator/local-cluster/images (assembled locally)',
    })),
  });
}

export async function writeDockerArchive(spec: ArchiveSpec): Promise<string> {
  const work = `${spec.out}.work-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const tar = (args: readonly string[], step: string) =>
    runStep({
      subject: spec.tag,
      version: 'image',
      step,
      command: 'tar',
      args,
      cwd: work,
      env: process.env,
      report: spec.report,
      retryHint: 'Rerun the command; the image is rebuilt from its sources.',
    });
  try {
    const layerPaths: string[] = [];
    const diffIds: string[] = [];
    for (const [index, dir] of spec.layers.entries()) {
      const layer = join(work, `layer-${index}.tar`);
      await tar(
        ['--numeric-owner', '--owner=0', '--group=0', '--sort=name', '-C', dir, '-cf', layer, '.'],
        `pack layer ${index}`,
      );
      const id = await sha256File(layer);
      await mkdir(join(work, id), { recursive: true });
      await rename(layer, join(work, id, 'layer.tar'));
      layerPaths.push(`${id}/layer.tar`);
      diffIds.push(id);
    }
    const config = imageConfigJson(spec.config, diffIds);
    const configId = createHash('sha256').update(config).digest('hex');
    await writeFile(join(work, `${configId}.json`), config);
    const manifest = [{ Config: `${configId}.json`, RepoTags: [spec.tag], Layers: layerPaths }];
    await writeFile(join(work, 'manifest.json'), JSON.stringify(manifest));
    await mkdir(dirname(spec.out), { recursive: true });
    const partial = `${spec.out}.partial-${process.pid}`;
    await tar(['-cf', partial, 'manifest.json', `${configId}.json`, ...diffIds], 'pack archive');
    await rename(partial, spec.out);
    return `sha256:${configId}`;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
