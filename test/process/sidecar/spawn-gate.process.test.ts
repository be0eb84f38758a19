/**
 * The spawn side never runs a shell the sidecar has not registered (issue 12): with no sidecar listening
 * the gate holds, retrying, and then closes without running the command; a sidecar that comes up during
 * the hold registers the shell and the command runs. Real processes, real socket.
 */
import { once } from 'node:events';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReaperClient, spawnRegisteredShell } from '../../../operator/sidecar/host/index.ts';
import { killMarked, startFixture, waitFor, type SidecarFixture } from './fixtures/process-fixtures.ts';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('the spawn gate without a sidecar', { timeout: 60_000 }, () => {
  let dir: string;
  let fixture: SidecarFixture | undefined;
  const prefix = `g${process.pid}`;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reaper-gate-'));
  });
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
    await killMarked(prefix);
    await rm(dir, { recursive: true, force: true });
  });

  it('holds, then refuses: an unregistered command never runs', async () => {
    const client = createReaperClient({ socketPath: join(dir, 'absent.sock'), timeoutMs: 500 });
    const ran = join(dir, 'ran');
    const shell = await spawnRegisteredShell({
      client,
      session: `${prefix}-child`,
      turn: 't1',
      command: `touch ${ran}`,
      holdMs: 300,
    });
    expect(shell.registration.kind).toBe('Failed');
    const [code] = (await (shell.child.exitCode === null
      ? once(shell.child, 'exit')
      : Promise.resolve([shell.child.exitCode]))) as [number | null];
    expect(code).toBe(70);
    expect(await exists(ran)).toBe(false);
  });

  it('registers and runs the command once the sidecar comes up during the hold', async () => {
    const socket = join(dir, 'reaper.sock');
    const client = createReaperClient({ socketPath: socket, timeoutMs: 2_000 });
    const ran = join(dir, 'ran');
    const spawning = spawnRegisteredShell({
      client,
      session: `${prefix}-child`,
      turn: 't1',
      command: `touch ${ran}; exec sleep 1000`,
      holdMs: 30_000,
    });
    fixture = await startFixture({ SANDBOX_REAPER_SOCKET: socket }, dir);
    const shell = await spawning;
    expect(shell.registration.kind).toBe('Registered');
    await waitFor('the command to run', async () => ((await exists(ran)) ? true : undefined));
  });
});
