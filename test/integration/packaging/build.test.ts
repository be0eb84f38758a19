/**
 * What the image runs: `npm run build` (the Dockerfile's build step) emits runnable JavaScript for the
 * operator, the sidecar and the kubectl plugin, importing only production dependencies; the Dockerfile, the
 * chart and the sidecar injection agree on those paths; the image runs as a numeric non-root user.
 */
import { execFile } from 'node:child_process';
import { access, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { SIDECAR_COMMAND } from '../../../operator/controller/pod-template.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
const dist = join(root, 'dist');

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

beforeAll(async () => {
  await run('npm', ['run', 'build'], { cwd: root, timeout: 240_000 });
}, 300_000);

describe('npm run build', () => {
  it('emits the three entry points, which start under Node', async () => {
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
    expect(main).toMatch(/from "\.\.\/controller\/[a-z-]+\.js"/);
    expect(main).not.toMatch(/from ["']\.[^"']*\.ts["']/);
  });
});

describe('the Dockerfile', () => {
  it('builds in one stage, installs production dependencies in another, and runs neither toolchain', async () => {
    const [build, deps, runtime] = await stages();
    expect(build?.lines).toContain('RUN npm run build');
    expect(deps?.lines.some((line) => line.startsWith('RUN npm ci --omit=dev'))).toBe(true);
    // The runtime base is the NODE_IMAGE build argument (pinnable by digest), by default the pinned Node.
    expect(runtime?.from).toBe('FROM ${NODE_IMAGE}');
    const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:\$\{NODE_VERSION\}-bookworm-slim$/m);
    expect(runtime?.lines).toContain('COPY --from=deps /src/node_modules ./node_modules');
    expect(runtime?.lines).toContain('COPY --from=build /src/dist ./dist');
    expect(runtime?.lines.some((line) => line.includes('--from=build /src/node_modules'))).toBe(false);
  });

  it('runs as a numeric non-root user, the operator by default, from the paths the chart and sidecar use', async () => {
    const runtime = (await stages()).at(-1)!;
    const user = runtime.lines.find((line) => line.startsWith('USER '))?.slice(5) ?? '';
    expect(user).toMatch(/^[1-9]\d*:\d+$/);
    expect(runtime.lines).toContain('WORKDIR /app');
    expect(runtime.lines).toContain('CMD ["node", "dist/operator/cli/main.js"]');
    const deployment = await readFile(
      join(root, 'charts/sandbox-operator/templates/deployment.yaml'),
      'utf8',
    );
    expect(deployment).toContain('command: [node, dist/operator/cli/main.js]');
    // The sidecar's command, run from the image's WORKDIR: a file the build emits.
    expect(SIDECAR_COMMAND[0]).toBe('node');
    await expect(access(join(root, SIDECAR_COMMAND[1]))).resolves.toBeUndefined();
    expect(runtime.lines.some((line) => line.startsWith('LABEL org.opencontainers.image.title='))).toBe(true);
  });
});
