// The examples (examples/*.yaml) name the image a platform's sandboxes would run on a real cluster,
// ghcr.io/agent-platform/agent-runtime. The real node has no registry to pull it from, so its pods would stay in
// ErrImagePull and no example would ever be Ready. The real node gets a stand-in under that exact name: the shell
// image plus an entry point that says, first thing in the container's log, that it is a stand-in, then idles
// until stopped. Only this node's containerd (under the run's temporary directory) ever holds it; a real cluster
// pulls the real image. The banner of `npm start`, docs/real-node.md and the examples' headers say so too.
import { createHash } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BuildReporter } from '../run-step.ts';
import { writeDockerArchive } from './docker-archive.ts';
import { busyboxRootfs, busyboxVersion, imagesDir, type LocalImage } from './node-images.ts';

/** The agent runtime the examples name (one tag: test/unit/examples checks every example against it). */
export const EXAMPLE_AGENT_RUNTIME_IMAGE = 'ghcr.io/agent-platform/agent-runtime:1.8.2';
const ENTRYPOINT = '/usr/local/bin/agent-runtime';

/** The stand-in's entry point (pure): its first line tells whoever reads the log what runs. */
export function standInEntrypoint(image: string): string {
  return `#!/bin/sh
# A stand-in for ${image}, built by sandbox-operator's local control plane
# (tools/local-cluster/images/example-stand-in.ts) so the examples run on its real node, which has no registry.
echo "agent-runtime stand-in: this container is not ${image} but a busybox shell that sandbox-operator's local control plane imported under that name (its node has no registry); a real cluster pulls the real image. Arguments: $*"
trap 'exit 0' TERM INT
while :; do
  sleep 3600 &
  wait $!
done
`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** The stand-in image under the examples' image name; cached by busybox version and entry point. */
export async function ensureExampleStandIn(root: string, report: BuildReporter): Promise<LocalImage> {
  const tag = EXAMPLE_AGENT_RUNTIME_IMAGE;
  const script = standInEntrypoint(tag);
  const key = createHash('sha256').update(tag).update(script).digest('hex').slice(0, 12);
  const archive = join(imagesDir(root), `agent-runtime-stand-in-${await busyboxVersion()}-${key}.tar`);
  if (await exists(archive)) return { tag, archive };
  const work = await mkdtemp(join(tmpdir(), 'sandbox-operator-stand-in-'));
  try {
    const base = join(work, 'base');
    await busyboxRootfs(base);
    const entry = join(work, 'entry');
    await mkdir(join(entry, 'usr/local/bin'), { recursive: true });
    await writeFile(join(entry, ENTRYPOINT), script);
    await chmod(join(entry, ENTRYPOINT), 0o755);
    await writeDockerArchive({
      tag,
      layers: [base, entry],
      config: {
        entrypoint: [ENTRYPOINT],
        user: '1000:1000',
        workingDir: '/workspace',
        labels: {
          'org.opencontainers.image.title': 'agent-runtime stand-in',
          'org.opencontainers.image.description': `Not ${tag}: a busybox stand-in under its name, for sandbox-operator's local real node only`,
        },
      },
      out: archive,
      report,
    });
    return { tag, archive };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
