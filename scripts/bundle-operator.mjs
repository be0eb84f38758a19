// Bundles the entry points the image runs into dist/bundle/ (esbuild, a devDependency; the options shared
// with the kubectl plugin's bundle are NODE_BUNDLE in bundle-plugin.mjs): the operator (main.mjs), the shell
// reaper sidecar (sidecar.mjs) and the chart's test (chart-test.mjs), their shared code in chunks/, a source
// map beside each file so `--enable-source-maps` stack traces name our .ts files. Nothing but Node built-ins
// is imported: the image needs no node_modules. `node scripts/bundle-operator.mjs` (npm run build does it).
// The local control plane (tools/local-cluster) is a tool of the checkout: nothing bundled here imports it.
/* global Buffer, process */
import { readFile, rm } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_BUNDLE, ROOT } from './bundle-plugin.mjs';

export const BUNDLE_DIR = 'dist/bundle';
/** Output name (without .mjs) → entry point; the Dockerfile, the chart and REAPER_COMMAND (operator/api/reaper-shape.ts) name these. */
export const ENTRY_POINTS = Object.freeze({
  main: 'operator/cli/main.ts',
  sidecar: 'operator/cli/sidecar.ts',
  'chart-test': 'operator/cli/chart-test.ts',
});
const OPTIONS = { ...NODE_BUNDLE, target: 'node24', keepNames: true };

/**
 * A dependency's code maps to its file only (line 1), not token by token: Node decodes a bundle's whole map
 * the first time `--enable-source-maps` formats a stack trace, and the dependencies' mappings (2.8 MB of the
 * operator's, 95 %) cost ~75 MiB of RSS for good (`node --enable-source-maps dist/bundle/main.mjs` with a
 * missing KUBECONFIG: 173 MiB peak; 113 with this; 98 without source maps). Our .ts files keep exact lines.
 * esbuild composes each input's own inline map (evanw/esbuild#1685; one mapped segment, since esbuild
 * 0.25.2 ignores a map without one).
 */
const dependenciesMappedByFile = {
  name: 'dependencies-mapped-by-file',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, async (args) => {
      const map = { version: 3, sources: [basename(args.path)], names: [], mappings: 'AAAA' };
      const inline = Buffer.from(JSON.stringify(map)).toString('base64');
      const contents = `${await readFile(args.path, 'utf8')}\n//# sourceMappingURL=data:application/json;base64,${inline}`;
      return { contents, loader: 'js' };
    });
  },
};

/** Writes the bundles into `outdir` (default dist/bundle) and returns esbuild's metafile. */
export async function bundleOperator(outdir = join(ROOT, BUNDLE_DIR)) {
  const { build } = await import('esbuild');
  await rm(outdir, { recursive: true, force: true }); // no chunk of an older build left beside the new ones
  const result = await build({
    ...OPTIONS,
    entryPoints: { ...ENTRY_POINTS },
    outdir,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: true,
    // Stack traces need the mappings, not the sources: half the map's bytes and memory.
    sourcesContent: false,
    plugins: [dependenciesMappedByFile],
  });
  return result.metafile;
}

/**
 * One self-contained ES module from TypeScript source that imports our modules by path from the repository
 * root: what tests and benches pipe into `node --input-type=module` inside a pod, which has no node_modules.
 */
export async function bundleScript(contents) {
  const { build } = await import('esbuild');
  const result = await build({
    ...OPTIONS,
    metafile: false,
    stdin: { contents, resolveDir: ROOT, sourcefile: 'pod-script.ts', loader: 'ts' },
    write: false,
  });
  return result.outputFiles[0].text;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2] === undefined ? undefined : resolve(process.argv[2]);
  const metafile = await bundleOperator(outdir);
  const files = Object.entries(metafile.outputs).filter(([file]) => file.endsWith('.mjs'));
  const bytes = files.reduce((sum, [, output]) => sum + output.bytes, 0);
  process.stdout.write(
    `bundled ${relative(process.cwd(), outdir ?? join(ROOT, BUNDLE_DIR))}/{${Object.keys(ENTRY_POINTS).join(',')}}.mjs ` +
      `(${files.length} files, ${Math.round(bytes / 1024)} KiB, ${Object.keys(metafile.inputs).length} inputs)\n`,
  );
}
