/**
 * `npm run crds` writes the CRD YAML generated from the zod schemas to crds/ and to the chart's crds/.
 * `npm run crds:check` exits non-zero, naming the file, when a checked-in file differs.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCrds } from './render-crds.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const targets = ['crds', join('charts', 'sandbox-operator', 'crds')];

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

const check = process.argv.includes('--check');
const drifted: string[] = [];
for (const dir of targets) {
  for (const [file, text] of Object.entries(renderCrds())) {
    const path = join(root, dir, file);
    if (check) {
      if ((await readOrEmpty(path)) !== text) drifted.push(join(dir, file));
    } else {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
      console.log(`wrote ${join(dir, file)}`);
    }
  }
}
if (drifted.length > 0) {
  console.error(`CRDs drifted from operator/api (run npm run crds): ${drifted.join(', ')}`);
  process.exit(1);
}
