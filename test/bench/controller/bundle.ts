/**
 * The operator as one ES module (esbuild, as scripts/bundle-plugin.mjs bundles the kubectl plugin), to
 * measure what module loading costs the compiled build: `npx tsx test/bench/controller/bundle.ts` writes
 * node_modules/.cache/sandbox-operator/bench-bundle/main.mjs and prints its path, for BENCH_OPERATOR_MAIN or
 * BENCH_OPERATOR_BASELINE. A bench tool only: the image still runs tsc's files.
 */
import { build } from 'esbuild';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export async function bundleOperator(name = 'bench-bundle'): Promise<string> {
  const out = resolve('node_modules', '.cache', 'sandbox-operator', name);
  await mkdir(out, { recursive: true });
  await writeFile(join(out, 'package.json'), '{ "type": "module" }\n');
  const outfile = join(out, 'main.mjs');
  await build({
    entryPoints: ['operator/cli/main.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    logLevel: 'warning',
    // CommonJS dependencies inside an ES module still call require() for Node built-ins.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
  });
  return outfile;
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) console.log(await bundleOperator());
