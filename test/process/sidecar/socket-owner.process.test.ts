/**
 * The socket belongs to the agent's user (issue 12): a root sidecar serving a non-root agent used to leave
 * it root:root, so the agent's connect(2) failed with EACCES. A real socket, and a real non-root client.
 */
import type { V1EnvVar } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { runAsPrivilegedSidecar } from './fixtures/privileged-sidecar.ts';
import { loadConfig } from '../../../operator/sidecar/contract/config.ts';
import { applyReaper } from '../../../operator/sidecar/injection/apply.ts';
import { listenOnSocket } from '../../../operator/sidecar/process/http-server.ts';

const run = promisify(execFile);
const NOBODY = 65534;
const CONNECT =
  'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected")';
const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot)('the socket’s owner', () => {
  let dir: string | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    server?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('is handed to the agent’s user, who can then connect with mode 0600', async () => {
    dir = await mkdtemp(join(tmpdir(), 'reaper-owner-'));
    await run('chmod', ['0755', dir]);
    const socket = join(dir, 'reaper.sock');
    server = createServer((_req, res) => res.end('{}'));
    await listenOnSocket(server, socket, 0o600, { uid: NOBODY, gid: NOBODY });
    const info = await stat(socket);
    expect([info.uid, info.gid, info.mode & 0o777]).toEqual([NOBODY, NOBODY, 0o600]);
    const { stdout } = await run('setpriv', [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      '/usr/bin/python3',
      '-c',
      CONNECT,
      socket,
    ]);
    expect(stdout.trim()).toBe('connected');
  });

  it('is handed over by a root sidecar holding only the Privileged mode’s capabilities, and its startup probe (root too) still connects', async () => {
    dir = await mkdtemp(join(tmpdir(), 'reaper-owner-'));
    await run('chmod', ['0755', dir]);
    const socket = join(dir, 'reaper.sock');
    // The owner and mode the injection gives a Privileged sidecar whose agent runs as NOBODY.
    const spec = applyReaper(
      {
        securityContext: { runAsUser: NOBODY, runAsGroup: NOBODY },
        containers: [{ name: 'agent', image: 'agent:1' }],
      },
      {
        image: 'operator:1',
        command: ['node'],
        sandbox: 'sbx',
        namespace: 'team',
        gracePeriodSeconds: 1,
        requestedMode: 'Privileged',
        // The namespace an administrator opted in (mode.ts): the only place a root sidecar runs.
        level: 'privileged',
        privilegedAllowed: true,
        serviceAccountName: 'reaper',
      },
    );
    const env = Object.fromEntries(
      (spec.initContainers?.[0]?.env ?? []).flatMap((e: V1EnvVar) =>
        e.value === undefined ? [] : [[e.name, e.value]],
      ),
    ) as Record<string, string>;
    const config = loadConfig({ ...env, SANDBOX_REAPER_SOCKET: socket });
    // The sidecar's container: root, every capability dropped but those the injection adds; the kubelet
    // runs the startup probe in that container, so it connects with the same credentials.
    const script = [
      "import { createServer } from 'node:http';",
      "import { connect } from 'node:net';",
      "import { stat } from 'node:fs/promises';",
      "import { listenOnSocket } from './operator/sidecar/process/http-server.ts';",
      'const server = createServer((_req, res) => res.end("{}"));',
      `await listenOnSocket(server, ${JSON.stringify(socket)}, ${String(config.socketMode)}, ${JSON.stringify(config.socketOwner)});`,
      `const info = await stat(${JSON.stringify(socket)});`,
      `const probe = await new Promise((done) => { const c = connect(${JSON.stringify(socket)}); c.on('connect', () => { c.destroy(); done('connected'); }).on('error', (e) => done(e.code)); });`,
      'console.log(JSON.stringify([info.uid, info.mode & 0o777, probe])); process.exit(0);',
    ].join('\n');
    const stdout = await runAsPrivilegedSidecar(script);
    const [uid, mode, probe] = JSON.parse(stdout) as [number, number, string];
    expect([uid, probe]).toEqual([NOBODY, 'connected']);
    expect(mode & 0o007).toBe(0); // nobody else
  });
});
