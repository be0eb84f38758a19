/**
 * `npm run pod-spec-schema` regenerates operator/api/pod-spec.schema.json, the PodSpec the Sandbox CRD holds
 * under spec.podTemplate.spec (issue 26, #5): it starts the local control plane (run it under
 * `flock /tmp/sandbox-operator-control-plane.lock` where other runs share the machine), reads
 * /openapi/v3/api/v1 from its kube-apiserver, extracts the PodSpec (scripts/pod-spec-extract.ts) and writes
 * it beside the Kubernetes version it came from. Then `npm run crds` renders the CRDs from it.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { startLocalCluster } from '@sandbox-operator/local-cluster';
import { extractStructural } from './pod-spec-extract.ts';

const OUTPUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'operator', 'api', 'pod-spec.schema.json');
const ROOT = 'io.k8s.api.core.v1.PodSpec';

const cluster = await startLocalCluster({
  controllerManager: false,
  kwok: false,
  crdDir: null,
  realNode: false,
});
try {
  const openapi = await cluster.kubectl(['get', '--raw', '/openapi/v3/api/v1']);
  const version = await cluster.kubectl(['get', '--raw', '/version']);
  if (openapi.exitCode !== 0 || version.exitCode !== 0) {
    throw new Error(`reading the API server's OpenAPI failed: ${openapi.stderr}${version.stderr}`);
  }
  const gitVersion = (JSON.parse(version.stdout) as { gitVersion: string }).gitVersion;
  const generated = {
    source: `kube-apiserver ${gitVersion} /openapi/v3/api/v1 ${ROOT}`,
    generatedBy: 'npm run pod-spec-schema (scripts/pod-spec-schema.ts); do not edit by hand',
    schema: extractStructural(JSON.parse(openapi.stdout), ROOT),
  };
  const style = await resolveConfig(OUTPUT);
  await writeFile(OUTPUT, await format(JSON.stringify(generated), { ...style, parser: 'json' }));
  console.log(`wrote ${OUTPUT} from kube-apiserver ${gitVersion}`);
} finally {
  await cluster.stop();
}
