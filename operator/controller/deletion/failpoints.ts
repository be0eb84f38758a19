/**
 * Failpoints for crash tests, in the manner of etcd's gofail: when SANDBOX_OPERATOR_FAILPOINTS names a step,
 * the process kills itself with SIGKILL right there, so tests can prove every step of a deletion resumes
 * safely after a crash. Unset (always, in production) they cost one Set lookup.
 */
import { WRITE_STEPS, type WriteStep } from './steps.ts';

/** A failpoint fires right after the deletion step of its name has written. */
export const FAILPOINTS = WRITE_STEPS;
export type Failpoint = WriteStep;

const armed = new Set(
  (process.env['SANDBOX_OPERATOR_FAILPOINTS'] ?? '').split(',').filter((name) => name !== ''),
);

export function failpoint(name: Failpoint): void {
  if (armed.has(name)) {
    process.stderr.write(`failpoint ${name}: SIGKILL\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}
