// `npm run image:build`: builds the operator image from the Dockerfile with buildah on a locally
// assembled base (operator/local-cluster/images), or finds it cached, and prints its tag, tar and size.
import { stat } from 'node:fs/promises';
import { cacheRoot } from '../cache.ts';
import { LocalClusterError } from '../errors.ts';
import { ensureOperatorImage } from '../images/operator-image.ts';
import { formatBuildEvent, formatElapsed } from '../run-step.ts';

async function main(): Promise<void> {
  const started = Date.now();
  const image = await ensureOperatorImage(cacheRoot(), (event) => {
    process.stderr.write(`${formatBuildEvent(event)}\n`);
  });
  const { size } = await stat(image.archive);
  process.stdout.write(`${image.tag}\n${image.archive} (${(size / 1e6).toFixed(0)} MB uncompressed)\n`);
  process.stderr.write(`[image] ready in ${formatElapsed(Date.now() - started)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`[image] build failed: ${error instanceof Error ? error.message : String(error)}\n`);
  if (error instanceof LocalClusterError && error.details.step !== undefined)
    process.stderr.write(`[image] failed step: ${error.details.step} (${error.details.subject ?? ''})\n`);
  process.exitCode = 1;
});
