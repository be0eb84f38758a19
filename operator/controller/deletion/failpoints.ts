/**
 * Failpoints for crash tests, in the manner of etcd's gofail: when the operator is started with
 * `--failpoints` (or SANDBOX_OPERATOR_FAILPOINTS, wiring/config.ts) naming a step, the process kills itself
 * with SIGKILL right there, so tests can prove every step of a deletion resumes safely after a crash. None
 * armed (always, in production) they cost one Set lookup.
 */
import { WRITE_STEPS, type WriteStep } from './steps.ts';

/** A failpoint fires right after the deletion step of its name has written. */
export const FAILPOINTS = WRITE_STEPS;
export type Failpoint = WriteStep;

/** The context's `failpoint` hook (context.ts) for the armed names. */
export function failpoints(armed: readonly Failpoint[]): (step: string) => void {
  const names = new Set<string>(armed);
  return (step) => {
    if (!names.has(step)) return;
    process.stderr.write(`failpoint ${step}: SIGKILL\n`);
    process.kill(process.pid, 'SIGKILL');
  };
}
