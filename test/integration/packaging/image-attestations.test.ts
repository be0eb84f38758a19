/**
 * The operator image's build (issue 26, supply chain): it pins its base by digest, and writes next to the
 * tar an SBOM listing the runtime dependencies of package-lock.json and a provenance statement naming the
 * tar's digest, the source commit, the base's digest and the build command. Built with buildah as
 * `npm run image:build` builds it (cached when the inputs have not changed); no registry, no network.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { cacheRoot } from '@sandbox-operator/local-cluster';
import { attestationPaths } from '@sandbox-operator/local-cluster/images/attestations';
import { sha256File } from '@sandbox-operator/local-cluster/images/docker-archive';
import { ensureOperatorImage } from '@sandbox-operator/local-cluster/images/operator-image';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');

type Statement = {
  _type: string;
  predicateType: string;
  subject: { name: string; digest: { sha256: string } }[];
  predicate: {
    buildDefinition: {
      externalParameters: { command: string[] };
      resolvedDependencies: { uri: string; digest: Record<string, string> }[];
    };
  };
};
type Bom = { bomFormat: string; components: { name: string; group?: string; version: string }[] };
type Lock = { packages: Record<string, { version?: string; dev?: boolean; link?: boolean }> };

let archive: string;
let statement: Statement;
let bom: Bom;

beforeAll(async () => {
  ({ archive } = await ensureOperatorImage(cacheRoot(), () => undefined));
  const paths = attestationPaths(archive);
  statement = JSON.parse(await readFile(paths.provenance, 'utf8')) as Statement;
  bom = JSON.parse(await readFile(paths.sbom, 'utf8')) as Bom;
}, 600_000);

describe('the image build’s provenance', () => {
  it('is an in-toto statement of SLSA provenance naming the digest of the tar built', async () => {
    expect(statement._type).toBe('https://in-toto.io/Statement/v1');
    expect(statement.predicateType).toBe('https://slsa.dev/provenance/v1');
    expect(statement.subject).toEqual([
      expect.objectContaining({
        name: archive.split('/').at(-1),
        digest: { sha256: await sha256File(archive) },
      }),
    ]);
  });

  it('names the source commit (one of this checkout’s) and the build command', async () => {
    const source = statement.predicate.buildDefinition.resolvedDependencies[0];
    const commit = source?.digest['gitCommit'] ?? '';
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    await run('git', ['merge-base', '--is-ancestor', commit, 'HEAD'], { cwd: root });
    const command = statement.predicate.buildDefinition.externalParameters.command;
    expect(command.slice(0, 2)).toEqual(['buildah', 'bud']);
    // Paths relative to the checkout: the same provenance is true for every clone that reuses the image.
    expect(command.slice(-3)).toEqual(['-f', 'Dockerfile', '.']);
    expect(command.filter((argument) => argument.includes(root))).toEqual([]);
  });

  it('pins the base by the digest buildah holds for it, and says so', async () => {
    const base = statement.predicate.buildDefinition.resolvedDependencies[1];
    const name = (base?.uri ?? '').replace(/^docker:\/\//, '');
    const { stdout } = await run('buildah', [
      'inspect',
      '--type',
      'image',
      '--format',
      '{{.FromImageDigest}}',
      name,
    ]);
    expect(`sha256:${base?.digest['sha256'] ?? ''}`).toBe(stdout.trim());
    const command = statement.predicate.buildDefinition.externalParameters.command;
    expect(command).toContain(`NODE_IMAGE=${name}@${stdout.trim()}`);
  });
});

describe('the image build’s SBOM', () => {
  it('is CycloneDX listing every runtime dependency of package-lock.json, at its version, and no dev one', async () => {
    expect(bom.bomFormat).toBe('CycloneDX');
    const listed = new Set(
      bom.components.map((c) => `${c.group ? `${c.group}/` : ''}${c.name}@${c.version}`),
    );
    const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as Lock;
    const packages = Object.entries(lock.packages)
      .filter(([path, entry]) => path.startsWith('node_modules/') && entry.link !== true)
      .map(([path, entry]) => ({
        id: `${path.split('node_modules/').at(-1)}@${entry.version}`,
        dev: entry.dev,
      }));
    const runtime = packages.filter((p) => p.dev !== true).map((p) => p.id);
    expect(runtime).toContain('@kubernetes/client-node@2.0.1');
    expect(runtime.filter((id) => !listed.has(id))).toEqual([]);
    const devOnly = packages.filter((p) => p.dev === true).map((p) => p.id);
    expect(devOnly.filter((id) => listed.has(id))).toEqual([]);
  });
});
