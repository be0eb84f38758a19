// Reaps what a crashed run left behind: a run state file whose owner process is gone names process
// groups and temporary directories. A group is killed only if its leader is still the very process
// that was recorded (same start time and executable), so a recycled pid is never touched.
import { readdir, readFile, rm, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processExecutable, sameProcessAlive } from './pids.ts';
import type { RunState } from './process-registry.ts';
import { signalGroup } from './processes.ts';
import { runTeardownSync } from './node/teardown.ts';

export interface ReapedRun {
  readonly stateFile: string;
  readonly ownerPid: number;
  readonly killed: readonly { name: string; pid: number }[];
  readonly removedDirs: readonly string[];
}

export async function reapOrphans(stateDir: string): Promise<ReapedRun[]> {
  let entries: string[];
  try {
    entries = await readdir(stateDir);
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const reaped: ReapedRun[] = [];
  for (const entry of entries.filter((name) => name.endsWith('.json'))) {
    const stateFile = join(stateDir, entry);
    const state = await readState(stateFile);
    if (state === null || state.host !== hostname()) continue;
    if (sameProcessAlive(state.ownerPid, state.ownerStartTime)) continue;
    const killed: { name: string; pid: number }[] = [];
    for (const child of state.children) {
      if (!sameProcessAlive(child.pid, child.startTime)) continue;
      if (processExecutable(child.pid) !== child.executable) continue;
      signalGroup(child.pid, 'SIGKILL');
      killed.push({ name: child.name, pid: child.pid });
    }
    // A real node's containers are not in the recorded groups: its teardown kills them by cgroup.
    for (const script of state.teardowns ?? []) runTeardownSync(script);
    for (const dir of state.tempDirs) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    await unlink(stateFile);
    reaped.push({ stateFile, ownerPid: state.ownerPid, killed, removedDirs: state.tempDirs });
  }
  return reaped;
}

async function readState(file: string): Promise<RunState | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as RunState;
  } catch (error: unknown) {
    // Vanished (its owner just finished) or half-written (its owner is writing it): not ours to judge.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || error instanceof SyntaxError) return null;
    throw error;
  }
}
