/**
 * What the image runs: `npm run build` (the Dockerfile's build step) emits runnable JavaScript for the
 * kubectl plugin and the package (importing only production dependencies) and one bundle per command the
 * image runs (operator, sidecar, chart test), which run from a directory with no node_modules, as in the
 * image; the Dockerfile, the chart and the sidecar injection agree on those paths; the image carries the
 * bundles alone and runs as a numeric non-root user.
 */
import { builtinModules } from 'node:module';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REAPER_COMMAND } from '../../../operator/api/reaper-shape.ts';
import { IMAGE_NODE_OPTIONS } from '../../harness/operator-bundle.ts';
import { bundleOperator } from '../../../scripts/bundle-operator.mjs';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
const dist = join(root, 'dist');
/** A directory like the image's /app: dist/bundle and nothing else, no node_modules above it. */
let app: string;

async function jsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.js')).map((e) => join(e.parentPath, e.name));
}

/** The Dockerfile's stages: FROM line, then its instructions. */
async function stages(): Promise<{ from: string; lines: string[] }[]> {
  const text = await readFile(join(root, 'Dockerfile'), 'utf8');
  const result: { from: string; lines: string[] }[] = [];
  for (const line of text.replace(/\\\n\s*/g, ' ').split('\n')) {
    if (line.startsWith('FROM ')) result.push({ from: line, lines: [] });
    else if (line.trim() !== '' && !line.startsWith('#')) result.at(-1)?.lines.push(line.trim());
  }
  return result;
}

/** Runs node on a file of the bundle copy; never throws, answers the exit code and output. */
async function inApp(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, args, {
      cwd: app,
      env: { PATH: process.env['PATH'], ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

beforeAll(async () => {
  await run('npm', ['run', 'build'], { cwd: root, timeout: 240_000 });
  app = await mkdtemp(join(tmpdir(), 'image-app-'));
  await cp(join(dist, 'bundle'), join(app, 'dist', 'bundle'), { recursive: true });
}, 300_000);
afterAll(async () => {
  await rm(app, { recursive: true, force: true });
});

describe('the bundles the image runs', () => {
  it('import nothing but Node built-ins and their own chunks', async () => {
    const out = join(app, 'metafile-build');
    const { outputs } = await bundleOperator(out);
    const entries = Object.keys(outputs).map((file) => file.split('/').at(-1));
    expect(entries).toEqual(expect.arrayContaining(['main.mjs', 'sidecar.mjs', 'chart-test.mjs']));
    const builtins = new Set(builtinModules);
    const foreign = Object.values(outputs)
      .flatMap((output) => output.imports)
      .filter((i) => i.external && !i.path.startsWith('node:') && !builtins.has(i.path))
      .map((i) => `${i.kind} ${i.path}`);
    expect([...new Set(foreign)].sort()).toEqual([
      // ws's optional native add-ons, required inside a try
      'require-call bufferutil',
      'require-call utf-8-validate',
    ]);
  });

  it('start from a directory without node_modules: the operator, its help and its pretty log', async () => {
    const help = await inApp(['dist/bundle/main.mjs', '--help']);
    expect(help.stdout).toContain('Runs sandbox-operator');
    // No cluster configured (the local control plane is a tool of the checkout, not of the image): one clear
    // error, in a stack trace that names our .ts file (the source map), in pino-pretty's format (its
    // transport's worker thread needs node_modules: "__dirname is not defined" in a bundle).
    const none = await inApp(['--enable-source-maps', 'dist/bundle/main.mjs'], {
      SANDBOX_OPERATOR_LOG_FORMAT: 'pretty',
    });
    expect(none.code).toBe(1);
    // eslint-disable-next-line no-control-regex -- pino-pretty's colour sequences are what we strip
    expect(none.stdout.replace(/\u001b\[[0-9;]*m/g, '')).toMatch(
      /^\[[\d:.]+\] FATAL: sandbox-operator failed/m,
    );
    expect(none.stdout).toContain('no cluster configured: set KUBECONFIG, or run in a pod');
    expect(none.stdout).toContain('operator/cli/main.ts');
    expect(none.stdout).not.toContain('__dirname');
  });

  it('start from a directory without node_modules: the chart test and the sidecar', async () => {
    const usage = await inApp(['dist/bundle/chart-test.mjs']);
    expect([usage.code, usage.stderr]).toEqual([2, expect.stringContaining('usage: chart-test')]);
    const sidecar = spawn(process.execPath, ['dist/bundle/sidecar.mjs'], {
      cwd: app,
      env: {
        PATH: process.env['PATH'],
        SANDBOX_REAPER_SOCKET: join(app, 'reaper.sock'),
        SANDBOX_REAPER_STATE_DIR: join(app, 'state'),
        SANDBOX_REAPER_OUTPUT_DIR: join(app, 'output'),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    sidecar.stdout.setEncoding('utf8');
    for await (const chunk of sidecar.stdout as AsyncIterable<string>) {
      out += chunk;
      if (out.includes('shell reaper ready')) break;
    }
    const exited = once(sidecar, 'exit');
    sidecar.kill('SIGTERM');
    expect([out.includes('shell reaper ready'), (await exited)[0]]).toEqual([true, 0]);
  });
});

describe('npm run build', () => {
  it('emits the plugin and the per-file operator, which start under Node', async () => {
    const { stdout: plugin } = await run(process.execPath, [
      join(dist, 'operator/cli/kubectl-sandbox.js'),
      '--help',
    ]);
    expect(plugin).toContain('kubectl sandbox refs <sandbox>');
    const { stdout: operator } = await run(process.execPath, [join(dist, 'operator/cli/main.js'), '--help']);
    expect(operator).toContain('Runs sandbox-operator');
    // The sidecar's entry starts serving when imported; check its syntax, and load the graph it starts.
    await run(process.execPath, ['--check', join(dist, 'operator/cli/sidecar.js')]);
    const app = join(dist, 'operator/sidecar/process/sidecar-app.js');
    const { stdout: loaded } = await run(process.execPath, [
      '--input-type=module',
      '--eval',
      `const app = await import(${JSON.stringify(app)}); console.log(typeof app.startSidecar);`,
    ]);
    expect(loaded.trim()).toBe('function');
  });

  it('imports nothing but Node built-ins and production dependencies', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const allowed = new Set(Object.keys(pkg.dependencies));
    const imported = new Set<string>();
    for (const file of await jsFiles(dist)) {
      const text = await readFile(file, 'utf8');
      for (const [, specifier = ''] of text.matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g)) {
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        const name = specifier.startsWith('@')
          ? specifier.split('/').slice(0, 2).join('/')
          : specifier.split('/')[0]!;
        imported.add(name);
      }
    }
    expect([...imported].filter((name) => !allowed.has(name))).toEqual([]);
    expect(imported.size).toBeGreaterThan(3);
  });

  it('rewrites relative imports to .js', async () => {
    const main = await readFile(join(dist, 'operator/cli/main.js'), 'utf8');
    expect(main).toMatch(/from "\.\.\/controller\/[a-z/-]+\.js"/);
    expect(main).not.toMatch(/from ["']\.[^"']*\.ts["']/);
  });
});

describe('the Dockerfile', () => {
  it('builds in one stage and runs the bundles in another, without the toolchain', async () => {
    const [build, runtime, ...more] = await stages();
    expect(more).toEqual([]);
    expect(build?.lines).toContain('RUN npm run build');
    // The runtime base is the NODE_IMAGE build argument (pinnable by digest), by default the pinned Node.
    expect(runtime?.from).toBe('FROM ${NODE_IMAGE}');
    const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:\$\{NODE_VERSION\}-bookworm-slim$/m);
    // The runtime carries the bundles alone: no node_modules, no per-file build.
    expect(runtime?.lines.filter((line) => line.startsWith('COPY'))).toEqual([
      'COPY --from=build /src/dist/bundle ./dist/bundle',
    ]);
    expect(runtime?.lines.some((line) => line.includes('node_modules'))).toBe(false);
    // The benches run the bundle with the image's node options (test/harness/operator-bundle.ts).
    const env = runtime?.lines.find((line) => line.startsWith('ENV ')) ?? '';
    const options = /NODE_OPTIONS=(?:"([^"]*)"|(\S+))/.exec(env);
    expect((options?.[1] ?? options?.[2])?.split(' ')).toEqual([...IMAGE_NODE_OPTIONS]);
  });

  it('runs as a numeric non-root user, the operator by default, from the paths the chart and sidecar use', async () => {
    const runtime = (await stages()).at(-1)!;
    const user = runtime.lines.find((line) => line.startsWith('USER '))?.slice(5) ?? '';
    expect(user).toMatch(/^[1-9]\d*:\d+$/);
    expect(runtime.lines).toContain('WORKDIR /app');
    expect(runtime.lines).toContain('CMD ["node", "dist/bundle/main.mjs"]');
    const deployment = await readFile(
      join(root, 'charts/sandbox-operator/templates/deployment.yaml'),
      'utf8',
    );
    expect(deployment).toContain('command: [node, dist/bundle/main.mjs]');
    // The sidecar's command, run from the image's WORKDIR: a file the build emits.
    expect(REAPER_COMMAND[0]).toBe('node');
    await expect(access(join(root, REAPER_COMMAND[1]))).resolves.toBeUndefined();
    expect(runtime.lines.some((line) => line.startsWith('LABEL org.opencontainers.image.title='))).toBe(true);
  });
});
