/**
 * The operator as the image runs it: the bundle scripts/bundle-operator.mjs writes (npm run build writes the
 * same into dist/bundle/, which the Dockerfile copies), for suites that start it as its own process and must
 * not charge tsx's transpiling or ~1,000 module loads to it (the soak, the benches). Written inside
 * node_modules/.cache so a bench never rewrites the checkout's dist/.
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(import.meta.dirname, '..', '..');

/** The Dockerfile's NODE_OPTIONS, which the benches pass too (test/integration/packaging checks they agree). */
export const IMAGE_NODE_OPTIONS = ['--enable-source-maps', '--max-semi-space-size=4'] as const;

/** Bundles into node_modules/.cache/sandbox-operator/<name> and returns the operator's entry main.mjs. */
export async function buildOperatorBundle(name: string): Promise<string> {
  const out = join(ROOT, 'node_modules', '.cache', 'sandbox-operator', name);
  await rm(out, { recursive: true, force: true });
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'bundle-operator.mjs'), out], {
    cwd: ROOT,
  });
  return join(out, 'main.mjs');
}
