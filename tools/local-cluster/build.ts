// Builds the pinned tools from the Go module proxy, each tool group in a throwaway module under the
// cache's src/ directory, and installs each binary atomically under bin/<tool>-<version>/.
import { access, chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, join } from 'node:path';
import { binaryPath, cacheRoot, lockPath, sourceDir, withLock } from './cache.ts';
import { LocalClusterError } from './errors.ts';
import { formatBuildEvent, runStep, type BuildReporter } from './run-step.ts';
import { parseUpstreamGoMod, renderGoMod, stagingReplacements } from './go-mod.ts';
import { ldflags, TOOLS, type ToolGroup, type ToolName, type ToolSpec } from './versions.ts';

export interface EnsureBinariesOptions<T extends ToolName> {
  readonly tools: readonly T[];
  /** Defaults to cacheRoot(): $SANDBOX_OPERATOR_CACHE, $XDG_CACHE_HOME/sandbox-operator, ~/.cache/... */
  readonly cacheDir?: string;
  /** Progress of a cold build; defaults to one line per event on stderr. */
  readonly report?: BuildReporter;
  /** How long to wait for another process that is building the same group. */
  readonly lockTimeoutMs?: number;
}

export type BinaryPaths<T extends ToolName> = Readonly<Record<T, string>>;

const defaultReport: BuildReporter = (event) => {
  process.stderr.write(`${formatBuildEvent(event)}\n`);
};

/** Returns the path of each requested binary, building the missing ones (once, under a lock). */
export async function ensureBinaries<T extends ToolName>(
  options: EnsureBinariesOptions<T>,
): Promise<BinaryPaths<T>> {
  const root = options.cacheDir ?? cacheRoot();
  const report = options.report ?? defaultReport;
  const specs = options.tools.map((name) => TOOLS[name]);
  const groups = new Map<ToolGroup, ToolSpec[]>();
  for (const spec of specs) groups.set(spec.group, [...(groups.get(spec.group) ?? []), spec]);

  for (const [group, tools] of groups) {
    if ((await missing(root, tools)).length === 0) continue;
    await withLock(
      lockPath(root, group),
      {
        timeoutMs: options.lockTimeoutMs ?? 90 * 60_000,
        onWait: (holder, waitedMs) => {
          report({
            subject: group.id,
            version: group.version,
            step: 'another process is building',
            phase: 'waiting',
            elapsedMs: waitedMs,
            detail: holder === null ? '' : `(pid ${holder.pid} on ${holder.host} since ${holder.since})`,
          });
        },
      },
      async () => {
        // Whoever held the lock before us may have built what we need.
        const stillMissing = await missing(root, tools);
        if (stillMissing.length > 0) await buildGroup(root, group, stillMissing, report);
      },
    );
  }
  const paths: Partial<Record<T, string>> = {};
  for (const name of options.tools) paths[name] = binaryPath(root, TOOLS[name]);
  return paths as Record<T, string>;
}

async function missing(root: string, tools: readonly ToolSpec[]): Promise<ToolSpec[]> {
  const absent: ToolSpec[] = [];
  for (const tool of tools) {
    try {
      await access(binaryPath(root, tool), constants.X_OK);
    } catch (error: unknown) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      absent.push(tool);
    }
  }
  return absent;
}

function goEnv(): NodeJS.ProcessEnv {
  // Static binaries, and no go.work of the caller's leaking into the throwaway module.
  return { ...process.env, CGO_ENABLED: '0', GOWORK: 'off', GO111MODULE: 'on' };
}

async function buildGroup(
  root: string,
  group: ToolGroup,
  tools: readonly ToolSpec[],
  report: BuildReporter,
): Promise<void> {
  const dir = sourceDir(root, group);
  const retryHint =
    `Retry with \`npm run cluster:build\`: finished downloads and compiled packages stay in Go's caches ` +
    `(go env GOMODCACHE GOCACHE). The throwaway module is ${dir}; the binaries go to ${join(root, 'bin')}.`;
  const step = (subject: string, version: string, name: string, args: readonly string[]) =>
    runStep({ subject, version, step: name, command: 'go', args, cwd: dir, env: goEnv(), report, retryHint });

  await checkGoVersion(dir, report, retryHint);
  // Start from a clean module each time: it is cheap, and a half-edited go.mod never survives.
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'go.mod'), `module sandbox-operator.local/tools/${group.id}\n`);

  const download = await step(group.id, group.version, 'go mod download', [
    'mod',
    'download',
    '-json',
    `${group.module}@${group.version}`,
  ]);
  const upstream = parseUpstreamGoMod(await readFile(goModPathFrom(download.stdout, group), 'utf8'));
  const replacements =
    group.replaceStagingWith === undefined ? [] : stagingReplacements(upstream, group.replaceStagingWith);
  if (group.replaceStagingWith !== undefined && replacements.length === 0) {
    throw new LocalClusterError(
      'build-step-failed',
      `${group.module}@${group.version}: no staging modules found in its go.mod`,
      {
        subject: group.id,
        step: 'derive staging list',
        hint: 'The upstream layout changed; update operator/local-cluster/go-mod.ts.',
      },
    );
  }
  await writeFile(
    join(dir, 'go.mod'),
    renderGoMod(`sandbox-operator.local/tools/${group.id}`, upstream, replacements),
  );

  const packages = TOOLSInGroup(group).map((tool) => `${tool.goPackage}@${group.version}`);
  await step(group.id, group.version, 'go get -tool', ['get', '-tool', ...packages]);

  for (const tool of tools) {
    const target = binaryPath(root, tool);
    await mkdir(dirname(target), { recursive: true });
    const partial = `${target}.partial-${process.pid}`;
    const args = ['build', '-trimpath', '-ldflags', ldflags(tool), '-o', partial, tool.goPackage];
    const built = await step(tool.name, tool.version, 'go build', args);
    await chmod(partial, 0o755);
    await verifyVersion(tool, partial, report, retryHint);
    await rename(partial, target);
    await writeFile(
      join(dirname(target), 'build.json'),
      `${JSON.stringify({ tool: tool.name, version: tool.version, package: tool.goPackage, ldflags: ldflags(tool), builtAt: new Date().toISOString(), buildSeconds: Math.round(built.elapsedMs / 1000) }, null, 2)}\n`,
    );
  }
}

// Go >= 1.21 fetches the toolchain a go.mod asks for (go 1.26) by itself; older Go cannot build these.
const MIN_GO_MINOR = 21;

async function checkGoVersion(dir: string, report: BuildReporter, retryHint: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const result = await runStep({
    subject: 'go',
    version: 'toolchain',
    step: 'go env GOVERSION',
    command: 'go',
    args: ['env', 'GOVERSION'],
    cwd: dir,
    env: goEnv(),
    report,
    retryHint,
  });
  const version = result.stdout.trim();
  const minor = /^go1\.(\d+)/.exec(version)?.[1];
  if (minor === undefined || Number(minor) < MIN_GO_MINOR) {
    throw new LocalClusterError(
      'go-missing',
      `Go ${version || '(unknown version)'} is too old to build the local cluster tools`,
      {
        subject: 'go',
        step: 'go env GOVERSION',
        hint: `Install Go >= 1.${MIN_GO_MINOR} (it downloads the Go 1.26 toolchain the tools need through the module proxy; keep GOTOOLCHAIN unset or "auto").`,
      },
    );
  }
}

function TOOLSInGroup(group: ToolGroup): ToolSpec[] {
  return Object.values(TOOLS).filter((tool) => tool.group === group);
}

function goModPathFrom(downloadJson: string, group: ToolGroup): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(downloadJson);
  } catch (error: unknown) {
    throw new LocalClusterError(
      'build-step-failed',
      `go mod download printed no JSON for ${group.module}`,
      { subject: group.id, step: 'go mod download', outputTail: downloadJson },
      { cause: error },
    );
  }
  const goMod = (parsed as { GoMod?: unknown }).GoMod;
  if (typeof goMod !== 'string') {
    throw new LocalClusterError(
      'build-step-failed',
      `go mod download gave no GoMod path for ${group.module}`,
      { subject: group.id, step: 'go mod download', outputTail: downloadJson },
    );
  }
  return goMod;
}

async function verifyVersion(
  tool: ToolSpec,
  binary: string,
  report: BuildReporter,
  retryHint: string,
): Promise<void> {
  const result = await runStep({
    subject: tool.name,
    version: tool.version,
    step: 'check --version',
    command: binary,
    args: tool.versionArgs,
    cwd: dirname(binary),
    env: process.env,
    report,
    retryHint,
  });
  const expected = tool.version.replace(/^v/, '');
  if (!result.stdout.includes(expected)) {
    throw new LocalClusterError(
      'build-step-failed',
      `${tool.name} reports "${result.stdout.trim()}", not ${tool.version}`,
      {
        subject: tool.name,
        step: 'check --version',
        hint: 'The version ldflags in operator/local-cluster/versions.ts no longer match the upstream variables.',
      },
    );
  }
}
