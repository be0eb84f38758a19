// Puts the operator image on the real node: builds it from the Dockerfile (or finds it cached) and
// imports it into the node's containerd. `npm start` and the real-node tests call it; pods then use
// the returned tag with imagePullPolicy IfNotPresent.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { LocalClusterError } from '../errors.ts';
import type { BuildReporter } from '../run-step.ts';
import { ensureOperatorImage } from './operator-image.ts';

const run = promisify(execFile);

export async function importArchive(containerdSocket: string, archive: string): Promise<void> {
  try {
    await run('ctr', ['--address', containerdSocket, '--namespace', 'k8s.io', 'images', 'import', archive], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error: unknown) {
    throw new LocalClusterError(
      'process-failed',
      `ctr images import ${archive} failed`,
      { subject: 'containerd', step: 'import image' },
      { cause: error },
    );
  }
}

/** The operator image's tag, present on the node whose containerd listens on `containerdSocket`. */
export async function operatorImageOnNode(
  root: string,
  containerdSocket: string,
  report: BuildReporter,
): Promise<string> {
  const image = await ensureOperatorImage(root, report);
  await importArchive(containerdSocket, image.archive);
  return image.tag;
}
