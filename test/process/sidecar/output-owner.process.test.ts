/**
 * Output files stay bounded in Privileged mode too (issue 12): the agent's spawn helper creates
 * `<shell>.log` as the agent's user with mode 0640, and the root sidecar holds no DAC_OVERRIDE, so its
 * O_WRONLY open for the truncation was refused (EACCES) and the file grew until the kubelet evicted the pod.
 * A real non-root writer keeps its O_APPEND descriptor open throughout; the sidecar runs as root with only
 * the Privileged mode's capabilities (DAC_OVERRIDE since issue 26 #2, so it writes the file), or those of a
 * pod made before (DAC_READ_SEARCH, no DAC_OVERRIDE: it takes ownership of the file first).
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAsPrivilegedSidecar } from './fixtures/privileged-sidecar.ts';
import { PRIVILEGED_CAPABILITIES } from '../../../operator/sidecar/injection/injection.ts';

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;
/** The agent's shell: opens its output as the spawn helper does, writes past the bound, then once more on cue. */
const WRITER = [
  'import os,sys',
  'os.umask(0o022)',
  'fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)',
  "os.write(fd, b'x' * 4096)",
  "print('written', flush=True)",
  'sys.stdin.readline()',
  "os.write(fd, b'after\\n')",
  "print('done', flush=True)",
].join('\n');

describe.skipIf(!asRoot)('an output file in Privileged mode', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['the Privileged mode’s', PRIVILEGED_CAPABILITIES, NOBODY],
    ['an earlier pod’s', ['KILL', 'SYS_PTRACE', 'DAC_READ_SEARCH', 'CHOWN'], 0],
  ] as const)(
    'is truncated by a root sidecar with %s capabilities past its bound, and the agent’s shell keeps writing at the new end',
    async (_, capabilities, owner) => {
      dir = await mkdtemp(join(tmpdir(), 'reaper-output-'));
      await chmod(dir, 0o777); // an emptyDir: the agent writes here
      const file = join(dir, 'sh-1.log');
      const writer = spawn('setpriv', [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        '--clear-groups',
        '/usr/bin/python3',
        '-c',
        WRITER,
        file,
      ]);
      const lines: string[] = [];
      const next = () =>
        new Promise<string>((done, fail) => {
          const onData = (chunk: Buffer) => {
            lines.push(...chunk.toString().trim().split('\n'));
            writer.stdout.off('data', onData);
            done(lines.at(-1) ?? '');
          };
          writer.stdout.on('data', onData);
          writer.once('exit', (code) => fail(new Error(`writer exited ${String(code)}`)));
        });
      expect(await next()).toBe('written');
      const before = await stat(file);
      expect([before.uid, before.mode & 0o777, before.size]).toEqual([NOBODY, 0o640, 4096]);

      const script = [
        "import { createOutputTail } from './operator/sidecar/process/os/output-tail.ts';",
        `const tail = createOutputTail(${JSON.stringify(dir)}, 1024);`,
        "await tail.bound('sh-1');",
        "console.log('bounded');",
      ].join('\n');
      const stdout = await runAsPrivilegedSidecar(script, capabilities);
      expect(stdout.trim()).toBe('bounded');
      expect((await stat(file)).size).toBe(0);

      writer.stdin.write('go\n');
      expect(await next()).toBe('done');
      expect(await readFile(file, 'utf8')).toBe('after\n');
      const after = await stat(file);
      // The agent's group still reads it; nobody else does. Only a sidecar that may not write it took it.
      expect([after.uid, after.gid, after.mode & 0o777]).toEqual([owner, NOBODY, 0o640]);
    },
  );
});
