// Liveness and identity of processes by pid. A pid alone can be reused by an unrelated process, so
// identity is pid + start time (from /proc on Linux); elsewhere only liveness is known.
import { readFileSync } from 'node:fs';

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error: unknown) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The kernel's start time of `pid` (clock ticks since boot), or null when unknown or gone. */
export function processStartTime(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error: unknown) {
    if (isGoneOrForbidden(error)) return null;
    throw error;
  }
  // Field 2 (comm) may contain spaces and parentheses; fields after the last ')' are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // starttime is field 22 overall, i.e. the 20th after comm.
  return fields[19] ?? null;
}

/** True when `pid` is running and is the same process that was recorded (same start time). */
export function sameProcessAlive(pid: number, recordedStartTime: string | null): boolean {
  if (!pidAlive(pid)) return false;
  if (recordedStartTime === null) return true;
  const now = processStartTime(pid);
  return now === null || now === recordedStartTime;
}

/** The executable of `pid` (Linux), or null when it cannot be read. */
export function processExecutable(pid: number): string | null {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.split('\0')[0] ?? null;
  } catch (error: unknown) {
    // Gone or not ours to read: the caller treats "unknown" as "not ours".
    if (isGoneOrForbidden(error)) return null;
    throw error;
  }
}

function isGoneOrForbidden(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES';
}
