// What the operator image's build says about itself, written next to its tar (issue 26, supply chain):
// - an SBOM, CycloneDX JSON from npm's own `npm sbom` (npm >= 9.5; here the npm the base carries), read
//   off package-lock.json alone (no registry), keeping the runtime dependencies: what the bundles carry;
// - a provenance statement, in-toto Statement v1 with a SLSA Provenance v1 predicate, naming the tar's
//   sha256, the source commit, the base image by digest and the build command.
// Neither is signed: they describe a local build (signing is a release pipeline's, docs/security.md).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import { sha256File } from './docker-archive.ts';

const run = promisify(execFile);

export const SOURCE_URI = 'git+https://github.com/sandbox-operator/sandbox-operator';
export const BUILD_TYPE =
  'https://github.com/sandbox-operator/sandbox-operator/tools/local-cluster/image-build@v1';

/** The files next to `<name>.tar`. */
export const attestationPaths = (archive: string) => ({
  sbom: archive.replace(/\.tar$/, '.sbom.cdx.json'),
  provenance: archive.replace(/\.tar$/, '.provenance.json'),
});

type CycloneDx = {
  components?: { 'bom-ref'?: string; scope?: string }[];
  dependencies?: { ref: string; dependsOn?: string[] }[];
  [key: string]: unknown;
};

/**
 * The runtime part of npm's SBOM. npm 11's `--omit dev` drops production packages that dev tools also
 * reach (pino, zod, … went missing), so the whole lock is described and its dev-only components — marked
 * `scope: optional` by npm — are left out here, with their edges.
 */
export function runtimeOnly(bom: CycloneDx): CycloneDx {
  const kept = (bom.components ?? []).filter((component) => component.scope === 'required');
  const refs = new Set(kept.map((component) => component['bom-ref']));
  const rootRef = (bom['metadata'] as { component?: { 'bom-ref'?: string } } | undefined)?.component?.[
    'bom-ref'
  ];
  if (rootRef !== undefined) refs.add(rootRef);
  const dependencies = (bom.dependencies ?? [])
    .filter((edge) => refs.has(edge.ref))
    .map((edge) => ({ ...edge, dependsOn: (edge.dependsOn ?? []).filter((ref) => refs.has(ref)) }));
  return { ...bom, components: kept, dependencies };
}

/** npm's CycloneDX SBOM of the repository's lock, runtime dependencies only. */
export async function runtimeSbom(repo: string): Promise<string> {
  const { stdout } = await run(
    'npm',
    [
      'sbom',
      '--sbom-format',
      'cyclonedx',
      '--sbom-type',
      'application',
      '--package-lock-only',
      '--workspaces=false',
      '--offline',
    ],
    { cwd: repo, maxBuffer: 64 * 1024 * 1024 },
  );
  return `${JSON.stringify(runtimeOnly(JSON.parse(stdout) as CycloneDx), null, 2)}\n`;
}

/** The commit the build's sources came from, and whether they differ from it (`git status`). */
export async function sourceRevision(repo: string): Promise<{ commit: string; dirty: boolean }> {
  const commit = (await run('git', ['rev-parse', 'HEAD'], { cwd: repo })).stdout.trim();
  const status = (await run('git', ['status', '--porcelain'], { cwd: repo })).stdout.trim();
  return { commit, dirty: status !== '' };
}

export type ProvenanceInput = {
  readonly archive: { readonly name: string; readonly sha256: string; readonly tag: string };
  readonly source: { readonly commit: string; readonly dirty: boolean; readonly inputsHash: string };
  /** The base as the build named it: `<name>@sha256:<digest>`. */
  readonly base: string;
  /** The command that built the image, argv. */
  readonly command: readonly string[];
  readonly sbom: { readonly name: string; readonly sha256: string };
  readonly startedOn: Date;
  readonly finishedOn: Date;
};

/** The in-toto statement (pure). */
export function provenanceStatement(input: ProvenanceInput): object {
  const [baseName, baseDigest] = input.base.split('@sha256:');
  return {
    _type: 'https://in-toto.io/Statement/v1',
    subject: [
      {
        name: input.archive.name,
        digest: { sha256: input.archive.sha256 },
        annotations: { tag: input.archive.tag },
      },
    ],
    predicateType: 'https://slsa.dev/provenance/v1',
    predicate: {
      buildDefinition: {
        buildType: BUILD_TYPE,
        externalParameters: { command: input.command, dockerfile: 'Dockerfile' },
        internalParameters: { inputsHash: input.source.inputsHash, sourceDirty: input.source.dirty },
        resolvedDependencies: [
          { uri: SOURCE_URI, digest: { gitCommit: input.source.commit } },
          { uri: `docker://${baseName ?? input.base}`, digest: { sha256: baseDigest ?? '' } },
        ],
      },
      runDetails: {
        builder: { id: BUILD_TYPE },
        metadata: {
          invocationId: createHash('sha256')
            .update(`${input.archive.sha256}${input.startedOn.toISOString()}`)
            .digest('hex')
            .slice(0, 16),
          startedOn: input.startedOn.toISOString(),
          finishedOn: input.finishedOn.toISOString(),
        },
        byproducts: [
          {
            name: input.sbom.name,
            digest: { sha256: input.sbom.sha256 },
            mediaType: 'application/vnd.cyclonedx+json',
          },
        ],
      },
    },
  };
}

export type AttestInput = Omit<ProvenanceInput, 'archive' | 'sbom' | 'source'> & {
  readonly repo: string;
  readonly archive: string;
  readonly tag: string;
  readonly inputsHash: string;
};

/** Writes the SBOM and the provenance next to the tar; the tar's digest is read off the file as built. */
export async function writeAttestations(input: AttestInput): Promise<{ sbom: string; provenance: string }> {
  const paths = attestationPaths(input.archive);
  const sbom = await runtimeSbom(input.repo);
  await writeFile(paths.sbom, sbom);
  const statement = provenanceStatement({
    ...input,
    archive: { name: basename(input.archive), sha256: await sha256File(input.archive), tag: input.tag },
    source: { ...(await sourceRevision(input.repo)), inputsHash: input.inputsHash },
    sbom: { name: basename(paths.sbom), sha256: createHash('sha256').update(sbom).digest('hex') },
  });
  await writeFile(paths.provenance, `${JSON.stringify(statement, null, 2)}\n`);
  return paths;
}
