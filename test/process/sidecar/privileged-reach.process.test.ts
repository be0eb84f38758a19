/**
 * The Privileged mode's root sidecar reaches the agent's processes and not the host (issue 26 #2). It reads
 * another user's marker with SYS_PTRACE and DAC_OVERRIDE, the capabilities the injection gives it; it no
 * longer holds DAC_READ_SEARCH, the one capability by which open_by_handle_at(2) opens any file of a mounted
 * filesystem by its handle — the "Shocker" escape from a container to the host's files, which the runtime's
 * default seccomp profile admits exactly when the container holds DAC_READ_SEARCH. Real processes of
 * another user, and the real syscall, under the mode's exact capability set.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { runAsPrivilegedSidecar, runWithCapabilities } from './fixtures/privileged-sidecar.ts';
import { MARKER_ENV } from '../../../operator/sidecar/contract/marker.ts';
import { PRIVILEGED_CAPABILITIES } from '../../../operator/sidecar/injection/injection.ts';

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;
/** name_to_handle_at and open_by_handle_at on x86_64 and arm64. */
const SYSCALLS: Record<string, readonly [number, number] | undefined> = {
  x64: [303, 304],
  arm64: [264, 265],
};
/** Takes a handle of a file, then tries to open it by that handle; prints `opened` or the errno's name. */
const OPEN_BY_HANDLE = [
  'import ctypes, errno, os, struct, sys',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'to_handle, by_handle = int(sys.argv[1]), int(sys.argv[2])',
  'handle = ctypes.create_string_buffer(8 + 128)',
  'struct.pack_into("I", handle, 0, 128)',
  'mount_id = ctypes.c_int()',
  'if libc.syscall(to_handle, -100, b"/etc/hostname", handle, ctypes.byref(mount_id), 0) != 0:',
  '    sys.exit("name_to_handle_at: " + errno.errorcode[ctypes.get_errno()])',
  'mount = os.open("/", os.O_RDONLY)',
  'fd = libc.syscall(by_handle, mount, handle, os.O_RDONLY)',
  'print("opened" if fd >= 0 else errno.errorcode[ctypes.get_errno()])',
].join('\n');

const syscalls = SYSCALLS[process.arch];

describe.skipIf(!asRoot)('the Privileged sidecar’s reach', () => {
  let agent: ChildProcess | undefined;
  afterEach(() => {
    agent?.kill('SIGKILL');
    agent = undefined;
  });

  it('reads the marker of a process of another user', async () => {
    agent = spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'sleep', '300'], {
      env: { PATH: process.env['PATH'], [MARKER_ENV.session]: 'child', [MARKER_ENV.turn]: 't1' },
    });
    const pid = agent.pid ?? -1;
    const script = [
      "import { createProcTable } from './operator/sidecar/process/os/proc-table.ts';",
      'const table = createProcTable();',
      // setpriv execs sleep in place: wait for the exec to have happened (the uid is nobody's then).
      `for (let i = 0; i < 100 && ((await table.readStat(${String(pid)}))?.comm ?? '') !== 'sleep'; i += 1)`,
      '  await new Promise((r) => setTimeout(r, 20));',
      `console.log(JSON.stringify(await table.readMarker(${String(pid)})));`,
    ].join('\n');
    expect(JSON.parse(await runAsPrivilegedSidecar(script))).toEqual({
      kind: 'Marked',
      marker: { session: 'child', turn: 't1' },
    });
    // Neither read capability alone suffices, so both are kept.
    const withoutOverride = PRIVILEGED_CAPABILITIES.filter((c) => c !== 'DAC_OVERRIDE');
    expect(JSON.parse(await runAsPrivilegedSidecar(script, withoutOverride))).toEqual({
      kind: 'Unreadable',
      reason: 'EACCES',
    });
  });

  it.skipIf(syscalls === undefined)(
    'cannot open a file by handle, as a holder of DAC_READ_SEARCH can',
    async () => {
      const [toHandle, byHandle] = syscalls ?? [0, 0];
      const probe = (capabilities: readonly string[]) =>
        runWithCapabilities(
          ['/usr/bin/python3', '-c', OPEN_BY_HANDLE, String(toHandle), String(byHandle)],
          capabilities,
        ).then((out) => out.trim());
      expect(await probe(PRIVILEGED_CAPABILITIES)).toBe('EPERM');
      expect(PRIVILEGED_CAPABILITIES).not.toContain('DAC_READ_SEARCH');
      // The probe opens what it should when the capability is there (the set the mode held before).
      expect(await probe(['KILL', 'SYS_PTRACE', 'DAC_READ_SEARCH', 'CHOWN'])).toBe('opened');
    },
  );
});
