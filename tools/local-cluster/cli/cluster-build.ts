// `npm run cluster:build [-- tool ...]`: builds (or finds in the cache) the pinned local-cluster tools.
import { cacheRoot } from '../cache.ts';
import { ensureBinaries } from '../build.ts';
import { formatElapsed } from '../run-step.ts';
import { ALL_TOOLS, TOOLS, type ToolName } from '../versions.ts';
import { LocalClusterError } from '../errors.ts';

function requestedTools(argv: readonly string[]): ToolName[] {
  if (argv.length === 0) return [...ALL_TOOLS];
  const unknown = argv.filter((name) => !(ALL_TOOLS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new LocalClusterError(
      'invalid-input',
      `unknown tool(s): ${unknown.join(', ')}; known: ${ALL_TOOLS.join(', ')}`,
    );
  }
  return argv as ToolName[];
}

async function main(): Promise<void> {
  const started = Date.now();
  const tools = requestedTools(process.argv.slice(2));
  const root = cacheRoot();
  process.stderr.write(`[local-cluster] cache: ${root}\n`);
  const paths = await ensureBinaries({ tools, cacheDir: root });
  for (const name of tools)
    process.stdout.write(`${name.padEnd(24)} ${TOOLS[name].version.padEnd(9)} ${paths[name]}\n`);
  process.stderr.write(
    `[local-cluster] ${tools.length} tool(s) ready in ${formatElapsed(Date.now() - started)}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[local-cluster] build failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  if (error instanceof LocalClusterError && error.details.step !== undefined) {
    process.stderr.write(
      `[local-cluster] failed step: ${error.details.step} (${error.details.subject ?? ''})\n`,
    );
  }
  process.exitCode = 1;
});
