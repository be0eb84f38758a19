// ensureBinaries against a fake `go` on PATH: the steps run in order with progress, concurrent callers
// build once, a built binary is reused, and a failing step says which step failed and how to retry.
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ensureBinaries } from '@sandbox-operator/local-cluster/build';
import { LocalClusterError } from '@sandbox-operator/local-cluster/errors';
import type { BuildEvent } from '@sandbox-operator/local-cluster/run-step';

const FAKE_GO = `#!/bin/sh
echo "$*" >> "$FAKE_GO_LOG"
case "$1" in
  mod) printf '{"Path":"m","Version":"v1","GoMod":"%s"}\\n' "$FAKE_GO_MOD" ;;
  env) echo "\${FAKE_GO_VERSION:-go1.26.8}" ;;
  get) ;;
  build)
    if [ -n "$FAKE_GO_FAIL" ]; then echo "compile: undefined: somethingBroke" >&2; exit 2; fi
    out=""; prev=""
    for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
    printf '#!/bin/sh\\necho "fake 3.6.16 0.8.0"\\n' > "$out"
    sleep 0.3 ;;
esac
`;

let dir: string;
let log: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'build-test-'));
  log = join(dir, 'go.log');
  await writeFile(join(dir, 'go'), FAKE_GO);
  await chmod(join(dir, 'go'), 0o755);
  await writeFile(join(dir, 'upstream.mod'), 'module go.etcd.io/etcd/server/v3\n\ngo 1.26.0\n');
  vi.stubEnv('PATH', `${dir}:${process.env['PATH'] ?? ''}`);
  vi.stubEnv('FAKE_GO_LOG', log);
  vi.stubEnv('FAKE_GO_MOD', join(dir, 'upstream.mod'));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

async function goCalls(): Promise<string[]> {
  return (await readFile(log, 'utf8')).trim().split('\n');
}

describe('ensureBinaries', () => {
  it('runs download, get, build and a version check, reporting each step', async () => {
    const events: BuildEvent[] = [];
    const paths = await ensureBinaries({
      tools: ['etcd'],
      cacheDir: join(dir, 'cache'),
      report: (e) => events.push(e),
    });
    expect(paths.etcd).toBe(join(dir, 'cache', 'bin', 'etcd-v3.6.16', 'etcd'));
    expect((await goCalls()).map((call) => call.split(' ').slice(0, 2).join(' '))).toEqual([
      'env GOVERSION',
      'mod download',
      'get -tool',
      'build -trimpath',
    ]);
    expect(await goCalls()).toContain(
      'build -trimpath -ldflags -s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-v3.6.16 -o ' +
        `${paths.etcd}.partial-${process.pid} go.etcd.io/etcd/server/v3`,
    );
    expect(events.filter((e) => e.phase === 'done').map((e) => `${e.subject}: ${e.step}`)).toEqual([
      'go: go env GOVERSION',
      'etcd: go mod download',
      'etcd: go get -tool',
      'etcd: go build',
      'etcd: check --version',
    ]);
    expect(await readFile(join(dir, 'cache', 'src', 'etcd-v3.6.16', 'go.mod'), 'utf8')).toContain(
      'go 1.26.0',
    );
  });

  it('builds once for concurrent callers, and not again once built', async () => {
    const cacheDir = join(dir, 'cache');
    const quiet = (): void => undefined;
    const [a, b] = await Promise.all([
      ensureBinaries({ tools: ['etcd', 'kwok'], cacheDir, report: quiet }),
      ensureBinaries({ tools: ['kwok', 'etcd'], cacheDir, report: quiet }),
    ]);
    expect(a).toEqual(b);
    await ensureBinaries({ tools: ['etcd', 'kwok'], cacheDir, report: quiet });
    expect((await goCalls()).filter((call) => call.startsWith('build '))).toHaveLength(2);
  });

  it('names the failing step, shows its output and says how to retry', async () => {
    vi.stubEnv('FAKE_GO_FAIL', '1');
    const events: BuildEvent[] = [];
    const error: unknown = await ensureBinaries({
      tools: ['etcd'],
      cacheDir: join(dir, 'cache'),
      report: (e) => events.push(e),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocalClusterError);
    const failure = error as LocalClusterError;
    expect(failure.kind).toBe('build-step-failed');
    expect(failure.details).toMatchObject({ subject: 'etcd', step: 'go build' });
    expect(failure.message).toContain('step "go build" failed (exit 2)');
    expect(failure.message).toContain('compile: undefined: somethingBroke');
    expect(failure.message).toContain('npm run cluster:build');
    expect(events.at(-1)).toMatchObject({ step: 'go build', phase: 'failed' });
  });

  it('says to install Go when there is none', async () => {
    vi.stubEnv('PATH', join(dir, 'empty'));
    const error: unknown = await ensureBinaries({
      tools: ['etcd'],
      cacheDir: join(dir, 'cache'),
      report: () => undefined,
    }).catch((e: unknown) => e);
    expect((error as LocalClusterError).kind).toBe('go-missing');
    expect((error as LocalClusterError).message).toContain('Install Go');
  });

  it('refuses a Go too old to fetch the toolchain the tools need', async () => {
    vi.stubEnv('FAKE_GO_VERSION', 'go1.19.8');
    const error: unknown = await ensureBinaries({
      tools: ['etcd'],
      cacheDir: join(dir, 'cache'),
      report: () => undefined,
    }).catch((e: unknown) => e);
    expect((error as LocalClusterError).kind).toBe('go-missing');
    expect((error as LocalClusterError).message).toContain('Go go1.19.8 is too old');
    expect((await goCalls()).some((call) => call.startsWith('build '))).toBe(false);
  });
});
