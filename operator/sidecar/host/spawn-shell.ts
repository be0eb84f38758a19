/**
 * The host side of the registration contract: spawn `bash -c <command>` detached (so pid = pgid = sid) with
 * the marker in its environment and its output in `<outputDir>/<shell>.log`, read its start time from
 * /proc, and register it.
 *
 * The spawn is gated: the shell first blocks reading fd 3, so it is surely alive (and has forked nothing)
 * when the sidecar checks /proc; once registration is answered the host writes a line and the shell
 * `exec`s the command — same pid, same start time, same marker. The command never runs unregistered
 * (issue 12): while the sidecar is unreachable or starting, the gate holds and registration is retried for
 * up to `holdMs`; if the turn has already ended (409), registration is refused, or the hold runs out, the
 * gate closes without a line, the shell exits 70 and the failure is returned, not thrown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { open, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RegisterShellRequest } from '../contract/requests.ts';
import { ReaperRequestError, type ReaperClient, type RegisterResult } from './client.ts';
import { errnoOf, SidecarError } from '../contract/errors.ts';
import { markerEnvironment } from '../contract/marker.ts';
import { parseProcStat } from '../contract/proc-stat.ts';

export interface SpawnShellOptions {
  readonly client: Pick<ReaperClient, 'registerShell'>;
  readonly session: string;
  readonly turn: string;
  readonly command: string;
  readonly cwd?: string;
  /** The shell's environment before the marker is added; defaults to the host's. */
  readonly env?: NodeJS.ProcessEnv;
  /** The sidecar's output directory (SANDBOX_REAPER_OUTPUT_DIR); without it output is discarded. */
  readonly outputDir?: string;
  /** A literal; the first complete output line containing it publishes a match notice. */
  readonly match?: string;
  /** Defaults to a random UUID. */
  readonly shell?: string;
  /** How long to hold the gate while the sidecar is unreachable or starting; default 10 s. */
  readonly holdMs?: number;
}

const HOLD_DEFAULT_MS = 10_000;
const RETRY_MIN_MS = 50;
const RETRY_MAX_MS = 1_000;

/** Unreachable (no answer) or shutting down/starting (503): worth holding the gate for. */
const isTransient = (error: unknown): boolean =>
  error instanceof ReaperRequestError && (error.status === undefined || error.status === 503);

async function registerHolding(
  client: Pick<ReaperClient, 'registerShell'>,
  request: RegisterShellRequest,
  holdMs: number,
): Promise<RegisterResult> {
  const deadline = Date.now() + holdMs;
  let pause = RETRY_MIN_MS;
  for (;;) {
    try {
      return await client.registerShell(request);
    } catch (error) {
      if (!isTransient(error) || Date.now() + pause > deadline) throw error;
      await sleep(pause);
      pause = Math.min(pause * 2, RETRY_MAX_MS);
    }
  }
}

export interface SpawnedShell {
  readonly shell: string;
  readonly pid: number;
  readonly child: ChildProcess;
  readonly registration: RegisterResult | { readonly kind: 'Failed'; readonly error: unknown };
}

/** Waits for the host's go on fd 3 (exits 70 without it), then becomes the command: `exec` keeps pid and start time. */
const GATED = 'read -r -u 3 _ || exit 70; exec 3<&-; exec /bin/bash -c "$1"';

async function startTimeOf(pid: number): Promise<number> {
  const parsed = parseProcStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  if (!parsed.ok)
    throw new SidecarError('SpawnFailed', `/proc/${pid}/stat: ${parsed.reason}`, { cause: parsed });
  return parsed.stat.startTime;
}

export async function spawnRegisteredShell(options: SpawnShellOptions): Promise<SpawnedShell> {
  const { client, session, turn, command, match } = options;
  const shell = options.shell ?? randomUUID();
  const output =
    options.outputDir === undefined ? undefined : await open(`${options.outputDir}/${shell}.log`, 'a', 0o640);
  let child: ChildProcess;
  try {
    child = spawn('/bin/bash', ['-c', GATED, 'sandbox-reaper-shell', command], {
      detached: true,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: { ...(options.env ?? process.env), ...markerEnvironment({ session, turn, shell }) },
      stdio: ['ignore', output?.fd ?? 'ignore', output?.fd ?? 'ignore', 'pipe'],
    });
  } finally {
    await output?.close();
  }
  const gate = child.stdio[3];
  // The gate is a socketpair: once the shell exits, its end may report ECONNRESET or EPIPE. That only says
  // the shell is gone, which the caller learns from `child`; without a listener it would crash the host.
  gate?.on('error', (error: unknown) => {
    if (!['ECONNRESET', 'EPIPE'].includes(errnoOf(error) ?? '')) child.emit('error', error);
  });
  const pid = child.pid;
  if (pid === undefined) {
    const [error] = (await once(child, 'error')) as [unknown];
    throw new SidecarError('SpawnFailed', command, { cause: error });
  }
  let registration: SpawnedShell['registration'];
  try {
    const leaderStartTime = await startTimeOf(pid);
    const request = { session, turn, shell, pgid: pid, leaderPid: pid, leaderStartTime };
    registration = await registerHolding(
      client,
      match === undefined ? request : { ...request, match },
      options.holdMs ?? HOLD_DEFAULT_MS,
    );
  } catch (error) {
    registration = { kind: 'Failed', error };
  }
  // Open the gate only for a registered shell; otherwise close it without a line, so nothing runs.
  if (gate !== null && gate !== undefined && 'end' in gate)
    gate.end(registration.kind === 'Registered' ? 'go\n' : '');
  return { shell, pid, child, registration };
}
