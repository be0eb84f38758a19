/**
 * The operator compiled as the image runs it (tsc of tsconfig.build.json), for suites that start it as its own
 * process and must not charge tsx's transpiling to it (the soak, the peer bench). Built inside node_modules so
 * it resolves the repo's packages; its own package.json makes it an ES module scope.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/** Builds into node_modules/.cache/sandbox-operator/<name> and returns the entry point main.js. */
export async function buildCompiledOperator(name: string): Promise<string> {
  const out = resolve('node_modules', '.cache', 'sandbox-operator', name);
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  await promisify(execFile)(process.execPath, [
    join('node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    'tsconfig.build.json',
    '--outDir',
    out,
    '--declaration',
    'false',
    '--sourceMap',
    'false',
  ]);
  await writeFile(join(out, 'package.json'), '{ "type": "module" }\n');
  return join(out, 'operator', 'cli', 'main.js');
}
