// The registry of live child process groups and temporary directories of this process, with three
// layers of cleanup so no component outlives the run:
//   1. on 'exit' (normal end, process.exit, uncaught exception) and on SIGINT/SIGTERM/SIGHUP when no
//      one else handles them: SIGKILL every group and remove the temporary directories, synchronously;
//   2. a watchdog (/bin/sh reading a pipe from us) that kills the groups when the pipe closes, which
//      also happens when we are SIGKILLed;
//   3. a state file per process under the cache's run/ directory, so the next run reaps what a crashed
//      run left (see reaper.ts).
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Writable } from 'node:stream';
import { mkdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processStartTime } from './pids.ts';
import { runTeardownSync } from './node/teardown.ts';

export interface TrackedChild {
  readonly name: string;
  readonly pid: number;
  readonly executable: string;
  readonly stateDir: string;
}

/** What a run state file holds; reaper.ts reads it. */
export interface RunState {
  readonly ownerPid: number;
  readonly ownerStartTime: string | null;
  readonly host: string;
  readonly children: readonly { name: string; pid: number; startTime: string | null; executable: string }[];
  readonly tempDirs: readonly string[];
  /** Teardown scripts of real nodes (node/teardown.ts): run before the directories go. */
  readonly teardowns?: readonly string[];
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

const WATCHDOG_SCRIPT = `
trap '' INT HUP
groups=" "
teardowns=" "
while read -r op pgid; do
  case "$op" in
    add) groups="$groups$pgid " ;;
    del) kept=" "; for g in $groups; do [ "$g" = "$pgid" ] || kept="$kept$g "; done; groups=$kept ;;
    teardown) teardowns="$teardowns$pgid " ;;
    untrack) kept=" "; for t in $teardowns; do [ "$t" = "$pgid" ] || kept="$kept$t "; done; teardowns=$kept ;;
  esac
done
[ "$groups" = " " ] && [ "$teardowns" = " " ] && exit 0
for g in $groups; do kill -TERM -$g 2>/dev/null; done
[ "$groups" = " " ] || sleep 2
for g in $groups; do kill -KILL -$g 2>/dev/null; done
for t in $teardowns; do [ -f "$t" ] && /bin/sh "$t"; done
`;

class ProcessRegistry {
  private readonly children = new Map<number, TrackedChild & { startTime: string | null }>();
  private readonly tempDirs = new Map<string, string>(); // path -> stateDir
  private readonly teardowns = new Map<string, string>(); // script -> stateDir
  private watchdog: Watchdog | null = null;
  private hooksInstalled = false;

  track(child: TrackedChild): void {
    this.children.set(child.pid, { ...child, startTime: processStartTime(child.pid) });
    this.installHooks();
    this.tellWatchdog(`add ${child.pid}`);
    this.persist(child.stateDir);
  }

  forget(pid: number): void {
    const child = this.children.get(pid);
    if (child === undefined) return;
    this.children.delete(pid);
    this.tellWatchdog(`del ${pid}`);
    this.persist(child.stateDir);
  }

  /** A directory removed on exit if its owner has not removed it. */
  trackTempDir(path: string, stateDir: string): void {
    this.tempDirs.set(path, stateDir);
    this.installHooks();
    this.persist(stateDir);
  }

  forgetTempDir(path: string): void {
    const stateDir = this.tempDirs.get(path);
    if (stateDir === undefined) return;
    this.tempDirs.delete(path);
    this.persist(stateDir);
  }

  /** A real node's teardown script (node/teardown.ts), run on exit, by the watchdog and by the reaper. */
  trackTeardown(script: string, stateDir: string): void {
    this.teardowns.set(script, stateDir);
    this.installHooks();
    this.tellWatchdog(`teardown ${script}`);
    this.persist(stateDir);
  }

  forgetTeardown(script: string): void {
    const stateDir = this.teardowns.get(script);
    if (stateDir === undefined) return;
    this.teardowns.delete(script);
    this.tellWatchdog(`untrack ${script}`);
    this.persist(stateDir);
  }

  livePids(): number[] {
    return [...this.children.keys()];
  }

  /** Synchronous last resort: kill every group, remove every directory and state file. */
  killAllNow(): void {
    for (const pid of this.children.keys()) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch (error: unknown) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH')
          process.stderr.write(`[local-cluster] kill -${pid}: ${String(error)}\n`);
      }
    }
    const stateDirs = new Set([...this.children.values()].map((c) => c.stateDir));
    for (const [script, stateDir] of this.teardowns) {
      stateDirs.add(stateDir);
      runTeardownSync(script);
    }
    this.teardowns.clear();
    for (const [dir, stateDir] of this.tempDirs) {
      stateDirs.add(stateDir);
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    }
    this.children.clear();
    this.tempDirs.clear();
    for (const stateDir of stateDirs) this.persist(stateDir);
  }

  private stateFile(stateDir: string): string {
    return join(stateDir, `${process.pid}-${processStartTime(process.pid) ?? 'unknown'}.json`);
  }

  private persist(stateDir: string): void {
    const children = [...this.children.values()].filter((c) => c.stateDir === stateDir);
    const tempDirs = [...this.tempDirs].filter(([, s]) => s === stateDir).map(([dir]) => dir);
    const teardowns = [...this.teardowns].filter(([, s]) => s === stateDir).map(([script]) => script);
    const file = this.stateFile(stateDir);
    if (children.length === 0 && tempDirs.length === 0 && teardowns.length === 0) {
      try {
        unlinkSync(file);
      } catch (error: unknown) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      return;
    }
    const state: RunState = {
      ownerPid: process.pid,
      ownerStartTime: processStartTime(process.pid),
      host: hostname(),
      children: children.map(({ name, pid, startTime, executable }) => ({
        name,
        pid,
        startTime,
        executable,
      })),
      tempDirs,
      teardowns,
    };
    mkdirSync(stateDir, { recursive: true });
    // Written aside and renamed, so the reaper never reads a torn file.
    writeFileSync(`${file}.partial`, `${JSON.stringify(state, null, 2)}\n`);
    renameSync(`${file}.partial`, file);
  }

  private tellWatchdog(line: string): void {
    if (this.watchdog === null || this.watchdog.exitCode !== null) {
      if (!line.startsWith('add ') && !line.startsWith('teardown ')) return;
      this.watchdog = startWatchdog();
      for (const pid of this.children.keys()) this.watchdog.stdin.write(`add ${pid}\n`);
      for (const script of this.teardowns.keys()) this.watchdog.stdin.write(`teardown ${script}\n`);
      return;
    }
    this.watchdog.stdin.write(`${line}\n`);
  }

  private installHooks(): void {
    if (this.hooksInstalled) return;
    this.hooksInstalled = true;
    process.on('exit', () => {
      this.killAllNow();
    });
    for (const signal of SIGNALS) {
      const onSignal = (): void => {
        // Someone else (the CLI's graceful stop, vitest) handles this signal and will exit; our
        // 'exit' hook then runs. Otherwise the default would have been to die: clean up, then die.
        if (process.listenerCount(signal) > 1) return;
        this.killAllNow();
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      };
      process.on(signal, onSignal);
    }
  }
}

type Watchdog = ChildProcessByStdio<Writable, null, null>;

function startWatchdog(): Watchdog {
  const watchdog = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', (error) => {
    process.stderr.write(`[local-cluster] watchdog: ${error.message}\n`);
  });
  watchdog.stdin.on('error', (error) => {
    process.stderr.write(`[local-cluster] watchdog pipe: ${error.message}\n`);
  });
  // Neither the watchdog nor its pipe may keep this process alive.
  watchdog.unref();
  return watchdog;
}

export const registry = new ProcessRegistry();
