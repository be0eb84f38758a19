/**
 * How GitOps engines read our objects' health, by their own code (docs/health.md): kstatus (sigs.k8s.io/cli-utils,
 * what Flux and kpt wait on) and Argo CD's Lua health checks (github.com/yuin/gopher-lua, the interpreter Argo
 * CD embeds). Two tiny Go programs in test/harness/health, built from their Go modules (go.sum pinned) into the
 * tool cache, like the control plane's binaries: once per content of their sources, under a lock.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, mkdir, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { cacheRoot, formatBuildEvent } from '@sandbox-operator/local-cluster';
import { withLock } from '@sandbox-operator/local-cluster/cache';
import { runStep } from '@sandbox-operator/local-cluster/run-step';

const SOURCE = join(import.meta.dirname, 'health');
const PROGRAMS = ['kstatus', 'argocd-lua'] as const;
type Program = (typeof PROGRAMS)[number];
const SOURCES = ['go.mod', 'go.sum', ...PROGRAMS.map((program) => `${program}/main.go`)];

/** Where the Argo CD health checks live, in Argo CD's resource_customizations layout. */
export const ARGOCD_HEALTH_DIR = join(import.meta.dirname, '..', '..', 'operator', 'api', 'health', 'argocd');

export const argoCdHealthScript = (kind: 'Sandbox' | 'SessionReference') =>
  join(ARGOCD_HEALTH_DIR, 'sandbox.agents.dev', kind, 'health.lua');

/** kstatus' status: Current, InProgress, Failed, Terminating, NotFound or Unknown. */
export type Kstatus = { readonly status?: string; readonly message?: string; readonly error?: string };
/** Argo CD's health: Healthy, Progressing, Degraded, Suspended, Missing or Unknown. */
export type ArgoCdHealth = { readonly status?: string; readonly message?: string; readonly error?: string };
export type ArgoCdHealthCase = {
  readonly script: string;
  readonly inputPath: string;
  readonly expected: ArgoCdHealth;
  readonly actual: ArgoCdHealth;
  readonly passed: boolean;
};

let built: Promise<Record<Program, string>> | undefined;

/** The two binaries, built into the cache when their sources changed (the cache key is their content). */
export function ensureHealthCheckers(): Promise<Record<Program, string>> {
  built ??= build();
  return built;
}

async function build(): Promise<Record<Program, string>> {
  const hash = createHash('sha256');
  for (const file of SOURCES) hash.update(`${file}\0`).update(await readFile(join(SOURCE, file)));
  const version = hash.digest('hex').slice(0, 12);
  const root = cacheRoot();
  const binaries = Object.fromEntries(
    PROGRAMS.map((program) => [program, join(root, 'bin', `health-checks-${version}`, program)]),
  ) as Record<Program, string>;
  if (await allExecutable(binaries)) return binaries;
  await withLock(
    join(root, 'locks', `health-checks-${version}.lock`),
    { timeoutMs: 30 * 60_000 },
    async () => {
      if (await allExecutable(binaries)) return;
      for (const program of PROGRAMS) {
        const target = binaries[program];
        await mkdir(dirname(target), { recursive: true });
        const partial = `${target}.partial-${process.pid}`;
        await runStep({
          subject: program,
          version,
          step: 'go build',
          command: 'go',
          args: ['build', '-trimpath', '-ldflags', '-s -w', '-o', partial, `./${program}`],
          cwd: SOURCE,
          // The sources' go.sum is the pin: nothing is resolved anew, and no go.work of the caller's applies.
          env: { ...process.env, CGO_ENABLED: '0', GOWORK: 'off', GOFLAGS: '-mod=readonly' },
          report: (event) => process.stderr.write(`${formatBuildEvent(event)}\n`),
          retryHint: `Rerun the test; the sources are ${SOURCE}, the binaries go to ${dirname(target)}.`,
        });
        await chmod(partial, 0o755);
        await rename(partial, target);
      }
    },
  );
  return binaries;
}

async function allExecutable(binaries: Record<Program, string>): Promise<boolean> {
  for (const path of Object.values(binaries)) {
    try {
      await access(path, constants.X_OK);
    } catch (error: unknown) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }
  return true;
}

/** Runs a binary with `input` on stdin; its stdout parsed as JSON. Exit 0, or `allowedExit`, is expected. */
async function runJson<T>(
  binary: string,
  args: readonly string[],
  input: string,
  allowedExit = 0,
): Promise<T> {
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdin.end(input);
  const code = await exit;
  const stdout = Buffer.concat(out).toString('utf8');
  if (code !== 0 && code !== allowedExit)
    throw new Error(`${binary} ${args.join(' ')} exited ${code}: ${Buffer.concat(err).toString('utf8')}`);
  return JSON.parse(stdout) as T;
}

/** What kstatus computes for each object (as read from the API server), in order. */
export async function kstatusOf(objects: readonly unknown[]): Promise<Kstatus[]> {
  const { kstatus } = await ensureHealthCheckers();
  return runJson<Kstatus[]>(kstatus, [], JSON.stringify(objects));
}

/** What Argo CD's health check for `kind` says of each object, in order. */
export async function argoCdHealthOf(
  kind: 'Sandbox' | 'SessionReference',
  objects: readonly unknown[],
): Promise<ArgoCdHealth[]> {
  const { 'argocd-lua': lua } = await ensureHealthCheckers();
  return runJson<ArgoCdHealth[]>(lua, ['health', argoCdHealthScript(kind)], JSON.stringify(objects));
}

/** Every health.lua under `dir` against its health_test.yaml (Argo CD's format); a failing case is a value. */
export async function argoCdHealthTests(dir = ARGOCD_HEALTH_DIR): Promise<ArgoCdHealthCase[]> {
  const { 'argocd-lua': lua } = await ensureHealthCheckers();
  return runJson<ArgoCdHealthCase[]>(lua, ['test', dir], '', 1);
}
