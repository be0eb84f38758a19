// Bundles the kubectl plugin into one ES module for Node.js >= 20 (esbuild, a devDependency): no
// node_modules needed beside it, nothing but Node built-ins imported, parsed once instead of ~40 files.
// `node scripts/bundle-plugin.mjs` (npm run build and prepare do it); bin/kubectl-sandbox calls
// bundlePlugin() itself when a source file is newer than the bundle.
/* global URL, process */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUNDLE = 'dist/plugin/kubectl-sandbox.mjs';
/** The bundle's inputs (relative to ROOT), for the launcher's staleness check. */
export const INPUTS = 'dist/plugin/kubectl-sandbox.inputs.json';

/**
 * The esbuild options every bundle of ours shares (this plugin's, and scripts/bundle-operator.mjs's of the
 * entry points the image runs): ES modules for Node, minified, with only Node built-ins left to import.
 */
export const NODE_BUNDLE = Object.freeze({
  absWorkingDir: ROOT,
  bundle: true,
  platform: 'node',
  format: 'esm',
  minify: true,
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
  // CommonJS dependencies inside an ES module still call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});

export async function bundlePlugin() {
  const { build } = await import('esbuild');
  const result = await build({
    ...NODE_BUNDLE,
    entryPoints: ['operator/cli/kubectl-sandbox.ts'],
    outfile: BUNDLE,
    target: 'node20',
  });
  await mkdir(new URL('../dist/plugin/', import.meta.url), { recursive: true });
  await writeFile(
    new URL(`../${INPUTS}`, import.meta.url),
    JSON.stringify(Object.keys(result.metafile.inputs)),
  );
  return result.metafile;
}

async function esbuildInstalled() {
  try {
    await import('esbuild');
    return true;
  } catch {
    return false;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `prepare` runs on every install, also one without dev dependencies: there the bundle is optional.
  if (process.argv.includes('--if-available') && !(await esbuildInstalled())) {
    process.stdout.write(
      'esbuild is not installed (no dev dependencies): the kubectl plugin is not bundled\n',
    );
    process.exit(0);
  }
  const metafile = await bundlePlugin();
  const bytes = Object.values(metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  process.stdout.write(
    `bundled ${BUNDLE} (${Math.round(bytes / 1024)} KiB, ${Object.keys(metafile.inputs).length} inputs)\n`,
  );
}
