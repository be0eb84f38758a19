/**
 * `npm start` and what it runs (the control plane, the operator, a real node) as one detached process group per
 * test, ended after the test whatever happened in it. A test that times out never runs its own `finally`: its
 * group used to outlive the run, holding the probe port and the real node, and failed every later start.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

const groups = new Set<number>();

/**
 * Spawns `command` as the leader of a new process group, its output piped, remembered until `endLeftoverGroups`
 * ends it.
 */
export function spawnGroup(
  command: string,
  args: readonly string[],
  options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string },
): ChildProcessByStdio<null, Readable, Readable> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  if (child.pid !== undefined) groups.add(child.pid);
  return child;
}

/** Whether any process of the group is left (signal 0 tests, and sends nothing). */
function alive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends every group a test left: Ctrl-C (SIGINT) first, so `npm start` stops its control plane and removes its
 * files as a user's Ctrl-C would; SIGKILL for what is still there after `graceMs`. Returns the groups it had to
 * end, so a hook can say so.
 */
export async function endLeftoverGroups(graceMs = 30_000): Promise<number[]> {
  const left = [...groups].filter(alive);
  groups.clear();
  for (const group of left) process.kill(-group, 'SIGINT');
  const deadline = Date.now() + graceMs;
  while (left.some(alive) && Date.now() < deadline) await sleep(200);
  for (const group of left.filter(alive)) process.kill(-group, 'SIGKILL');
  // Until reaped, a killed process still answers signal 0; the waits let Node reap its own children.
  const reaped = Date.now() + 5_000;
  while (left.some(alive) && Date.now() < reaped) await sleep(50);
  return left;
}
