// Child processes of the local control plane. Each runs detached in its own process group (so a
// terminal's Ctrl-C reaches us, not them, and stopping kills everything the component started) and
// logs to a file. Every live child is tracked by the registry, which cleans up on exit and signals.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { LocalClusterError, tail } from './errors.ts';
import { registry } from './process-registry.ts';

export interface ProcessSpec {
  /** Component name used in logs and errors, e.g. `kube-apiserver`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly logPath: string;
  /** Directory of this process's run state (see process-registry.ts). */
  readonly stateDir: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Settles when the process group leader has exited. */
  readonly exited: Promise<ExitInfo>;
  running(): boolean;
  /** SIGTERM to the whole group, SIGKILL after `graceMs`; resolves once the leader is gone. */
  stop(graceMs?: number): Promise<ExitInfo>;
  logTail(lines?: number): Promise<string>;
}

export function startProcess(spec: ProcessSpec): ManagedProcess {
  const log = openSync(spec.logPath, 'a');
  let child;
  try {
    child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env ?? process.env,
      detached: true,
      stdio: ['ignore', log, log],
    });
  } finally {
    closeSync(log);
  }
  // Reported asynchronously (e.g. ENOENT); without a listener it would crash the process.
  child.on('error', (error) => {
    process.stderr.write(`[local-cluster] ${spec.name}: ${error.message}\n`);
  });
  const pid = child.pid;
  if (pid === undefined) {
    throw new LocalClusterError('process-failed', `${spec.name}: could not start ${spec.command}`, {
      subject: spec.name,
      step: 'spawn',
      hint: 'Run `npm run cluster:build` to (re)build the binaries.',
    });
  }
  let exitInfo: ExitInfo | null = null;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      registry.forget(pid);
      resolve(exitInfo);
    });
  });
  registry.track({ name: spec.name, pid, executable: spec.command, stateDir: spec.stateDir });

  const logTail = async (lines = 30): Promise<string> => tail(await readFile(spec.logPath, 'utf8'), lines);
  return {
    name: spec.name,
    pid,
    logPath: spec.logPath,
    exited,
    running: () => exitInfo === null,
    logTail,
    async stop(graceMs = 10_000): Promise<ExitInfo> {
      if (exitInfo !== null) return exitInfo;
      signalGroup(pid, 'SIGTERM');
      const timedOut = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          resolve(true);
        }, graceMs);
        void exited.then(() => {
          clearTimeout(timer);
          resolve(false);
        });
      });
      if (timedOut) signalGroup(pid, 'SIGKILL');
      const info = await exited;
      signalGroup(pid, 'SIGKILL'); // anything the leader left behind in its group
      return info;
    },
  };
}

/** Sends `signal` to process group `pgid`; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
