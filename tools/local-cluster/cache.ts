// Where built binaries live (outside the repository) and the lock that keeps concurrent callers from
// building the same thing twice.
import { hostname, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { LocalClusterError } from './errors.ts';
import { processStartTime, sameProcessAlive } from './pids.ts';
import type { ToolGroup, ToolSpec } from './versions.ts';

/** `$SANDBOX_OPERATOR_CACHE`, else `$XDG_CACHE_HOME/sandbox-operator`, else `~/.cache/sandbox-operator`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['SANDBOX_OPERATOR_CACHE'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg !== undefined && xdg !== '') return join(xdg, 'sandbox-operator');
  return join(homedir(), '.cache', 'sandbox-operator');
}

export function binaryPath(root: string, tool: ToolSpec): string {
  return join(root, 'bin', `${tool.name}-${tool.version}`, tool.name);
}

/** The throwaway Go module that builds one tool group. */
export function sourceDir(root: string, group: ToolGroup): string {
  return join(root, 'src', `${group.id}-${group.version}`);
}

export function lockPath(root: string, group: ToolGroup): string {
  return join(root, 'locks', `${group.id}-${group.version}.lock`);
}

/** State files of running clusters, so a crashed run's processes can be reaped by the next one. */
export function runStateDir(root: string): string {
  return join(root, 'run');
}

interface LockOwner {
  readonly pid: number;
  readonly startTime: string | null;
  readonly host: string;
  readonly since: string;
}

export interface LockOptions {
  readonly timeoutMs: number;
  /** Called about every `waitReportMs` while another process holds the lock. */
  readonly onWait?: (holder: { pid: number; host: string; since: string } | null, waitedMs: number) => void;
  readonly waitReportMs?: number;
}

// A lock file whose writer died before writing its owner is stale after this long.
const UNWRITTEN_LOCK_STALE_MS = 10_000;
const POLL_MS = 500;

/** Runs `fn` while holding an O_EXCL lock file; a lock left by a dead process is broken. */
export async function withLock<T>(path: string, options: LockOptions, fn: () => Promise<T>): Promise<T> {
  const owner = await acquire(path, options);
  try {
    return await fn();
  } finally {
    await release(path, owner);
  }
}

async function acquire(path: string, options: LockOptions): Promise<LockOwner> {
  await mkdir(dirname(path), { recursive: true });
  const started = Date.now();
  let lastReport = started;
  const me: LockOwner = {
    pid: process.pid,
    startTime: processStartTime(process.pid),
    host: hostname(),
    since: new Date().toISOString(),
  };
  for (;;) {
    if (await tryCreate(path, me)) return me;
    const holder = await readOwner(path);
    if (await isStale(path, holder)) {
      await breakStale(path, holder);
      continue;
    }
    const waited = Date.now() - started;
    if (waited > options.timeoutMs) {
      throw new LocalClusterError(
        'lock-timeout',
        `timed out after ${Math.round(waited / 1000)}s waiting for ${path}`,
        {
          hint: `Another build holds the lock (${JSON.stringify(holder)}). If no build is running, delete ${path}.`,
        },
      );
    }
    if (options.onWait !== undefined && Date.now() - lastReport >= (options.waitReportMs ?? 15_000)) {
      lastReport = Date.now();
      options.onWait(holder, waited);
    }
    await delay(POLL_MS);
  }
}

async function tryCreate(path: string, me: LockOwner): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(JSON.stringify(me));
  } finally {
    await handle.close();
  }
  return true;
}

async function readOwner(path: string): Promise<LockOwner | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    return JSON.parse(text) as LockOwner;
  } catch (error: unknown) {
    // Created but not yet written (or its writer died mid-write): isStale decides by age.
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

async function isStale(path: string, holder: LockOwner | null): Promise<boolean> {
  if (holder === null) {
    const age = await fileAgeMs(path);
    return age !== null && age > UNWRITTEN_LOCK_STALE_MS;
  }
  // A holder on another host (shared cache directory) cannot be checked: wait for it.
  return holder.host === hostname() && !sameProcessAlive(holder.pid, holder.startTime);
}

async function fileAgeMs(path: string): Promise<number | null> {
  try {
    return Date.now() - (await stat(path)).mtimeMs;
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

// Two waiters may both see the same stale lock; a second O_EXCL file serialises the breaking so one
// waiter never deletes the fresh lock the other has just taken.
async function breakStale(path: string, seen: LockOwner | null): Promise<void> {
  const breaker = `${path}.break`;
  const me: LockOwner = {
    pid: process.pid,
    startTime: null,
    host: hostname(),
    since: new Date().toISOString(),
  };
  if (!(await tryCreate(breaker, me))) {
    const age = await fileAgeMs(breaker);
    if (age !== null && age > UNWRITTEN_LOCK_STALE_MS) await unlinkIfPresent(breaker);
    await delay(POLL_MS);
    return;
  }
  try {
    const now = await readOwner(path);
    if (JSON.stringify(now) === JSON.stringify(seen)) await unlinkIfPresent(path);
  } finally {
    await unlinkIfPresent(breaker);
  }
}

async function release(path: string, me: LockOwner): Promise<void> {
  const now = await readOwner(path);
  if (now !== null && now.pid === me.pid && now.since === me.since) await unlinkIfPresent(path);
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
