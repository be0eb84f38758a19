/**
 * The pure parts of the image's attestations (tools/local-cluster/images/attestations.ts): which of npm's
 * SBOM components stay (the runtime ones, with their edges), and the statement's shape. The build that
 * writes them: test/integration/packaging/image-attestations.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  attestationPaths,
  provenanceStatement,
  runtimeOnly,
} from '@sandbox-operator/local-cluster/images/attestations';

describe('the runtime SBOM', () => {
  it('keeps npm’s required components and the edges between them and the root, nothing dev-only', () => {
    const bom = {
      bomFormat: 'CycloneDX',
      metadata: { component: { 'bom-ref': 'app@1' } },
      components: [
        { 'bom-ref': 'pino@10', scope: 'required' },
        { 'bom-ref': 'vitest@4', scope: 'optional' },
      ],
      dependencies: [
        { ref: 'app@1', dependsOn: ['pino@10', 'vitest@4'] },
        { ref: 'vitest@4', dependsOn: ['pino@10'] },
        { ref: 'pino@10' },
      ],
    };
    expect(runtimeOnly(bom)).toEqual({
      bomFormat: 'CycloneDX',
      metadata: { component: { 'bom-ref': 'app@1' } },
      components: [{ 'bom-ref': 'pino@10', scope: 'required' }],
      dependencies: [
        { ref: 'app@1', dependsOn: ['pino@10'] },
        { ref: 'pino@10', dependsOn: [] },
      ],
    });
  });
});

describe('the provenance statement', () => {
  it('names the tar by digest, the commit, the base by digest, the command and the SBOM beside it', () => {
    const statement = provenanceStatement({
      archive: { name: 'op-1.tar', sha256: 'a'.repeat(64), tag: 'op:dev-1' },
      source: { commit: 'c'.repeat(40), dirty: false, inputsHash: 'h' },
      base: `docker.io/library/node:24@sha256:${'b'.repeat(64)}`,
      command: ['buildah', 'bud'],
      sbom: { name: 'op-1.sbom.cdx.json', sha256: 'd'.repeat(64) },
      startedOn: new Date(0),
      finishedOn: new Date(1000),
    });
    expect(statement).toMatchObject({
      _type: 'https://in-toto.io/Statement/v1',
      subject: [{ name: 'op-1.tar', digest: { sha256: 'a'.repeat(64) } }],
      predicateType: 'https://slsa.dev/provenance/v1',
      predicate: {
        buildDefinition: {
          externalParameters: { command: ['buildah', 'bud'] },
          resolvedDependencies: [
            { digest: { gitCommit: 'c'.repeat(40) } },
            { uri: 'docker://docker.io/library/node:24', digest: { sha256: 'b'.repeat(64) } },
          ],
        },
        runDetails: { byproducts: [{ name: 'op-1.sbom.cdx.json', digest: { sha256: 'd'.repeat(64) } }] },
      },
    });
    expect(attestationPaths('/c/op-1.tar')).toEqual({
      sbom: '/c/op-1.sbom.cdx.json',
      provenance: '/c/op-1.provenance.json',
    });
  });
});
