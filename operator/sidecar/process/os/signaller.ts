/**
 * The only place the sidecar calls `process.kill`. The guard comes first: Node signals the caller's own
 * group for 0, everything it may signal for -1, coerces numeric strings, and PID 1 is the pod's pause
 * (kill(2) with a negative pid). ESRCH is "gone" and never falls back to signalling the pid alone: after
 * ESRCH the number can only belong to a stranger.
 */
import { errnoOf } from '../../contract/errors.ts';
import type { SignalOutcome, Signaller, RetireSignal } from './ports.ts';
import { PID_MAX } from '../../contract/requests.ts';

export interface SignallerIdentity {
  readonly ownPid: number;
  /** The sidecar's own process group (from /proc/self/stat; Node has no getpgid). */
  readonly ownPgid: number;
}

/** Why a target is refused before kill(2), or undefined when it may be signalled. */
export function guardTarget(target: unknown, refused: ReadonlySet<number>): string | undefined {
  if (typeof target !== 'number' || !Number.isSafeInteger(target)) return 'not an integer';
  if (target <= 1) return `${target} is 0, -1, PID 1 or negative`;
  if (target > PID_MAX) return `${target} exceeds pid_max`;
  if (refused.has(target)) return `${target} is the sidecar, its group, or a protected process`;
  return undefined;
}

export function createSignaller(identity: SignallerIdentity): Signaller {
  const fixed = new Set<number>([1, identity.ownPid, identity.ownPgid]);
  let refused: ReadonlySet<number> = fixed;
  let hosts: ReadonlySet<number> = new Set();
  const rebuild = () => {
    refused = new Set([...fixed, ...hosts]);
  };
  const send = (target: number, kill: number, signal: RetireSignal): SignalOutcome => {
    const reason = guardTarget(target, refused);
    if (reason !== undefined) return { kind: 'Forbidden', reason };
    try {
      process.kill(kill, signal);
      return { kind: 'Delivered' };
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ESRCH') return { kind: 'Gone' };
      return { kind: 'Refused', code: code ?? 'unknown' };
    }
  };
  return {
    signalGroup: (pgid, signal) => send(pgid, -pgid, signal),
    signalProcess: (pid, signal) => send(pid, pid, signal),
    protect(pid) {
      if (Number.isSafeInteger(pid) && pid > 0) fixed.add(pid);
      rebuild();
    },
    protectHosts(pids) {
      hosts = new Set([...pids].filter((pid) => Number.isSafeInteger(pid) && pid > 0));
      rebuild();
    },
    protectedPids: () => refused,
  };
}
