// Running kubectl as a user of the plugin would: the built kubectl and the repository's bin/ first on the
// user's PATH, which has no node_modules/.bin (so `node` is the machine's own, not the pinned Node 24).
import { execFile } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import './provided-context.ts';

const run = promisify(execFile);
export const repositoryRoot = join(import.meta.dirname, '..', '..');

/** The PATH without npm's node_modules/.bin entries. */
export const userPath = (): string =>
  (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((entry) => !entry.includes(join('node_modules', '.bin')))
    .join(delimiter);

export const pluginPath = (): string =>
  [dirname(inject('kubectl')), join(repositoryRoot, 'bin'), userPath()].join(delimiter);

export type UserResult = { exitCode: number; stdout: string; stderr: string };

/** `kubectl <args>` as the user runs it; never throws on a non-zero exit. */
export async function kubectlAsUser(
  args: readonly string[],
  options: { restricted?: boolean } = {},
): Promise<UserResult> {
  const kubeconfig = options.restricted ? inject('restrictedKubeconfig') : inject('kubeconfig');
  if (kubeconfig === null) throw new Error('the plugin tests need the local cluster');
  const env = { ...process.env, KUBECONFIG: kubeconfig, PATH: pluginPath() };
  try {
    const { stdout, stderr } = await run('kubectl', [...args], { env, timeout: 60_000 });
    return { exitCode: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { exitCode: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
