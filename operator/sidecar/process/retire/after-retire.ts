/**
 * What follows a finished retire, off the reaper's lock: compact the journal if it grew, remove the
 * retired shells' output files, and report the retire (status.shells and an Event). Each failure is logged
 * and never costs the turn its answer.
 */
import type { Logger } from 'pino';
import type { OutputTail } from '../os/output-tail.ts';
import type { RetireReport, RetireReporter } from '../kube/ports.ts';

export interface AfterRetireDeps {
  readonly logger: Logger;
  readonly reporter: RetireReporter;
  readonly tail?: OutputTail;
  readonly compact: () => Promise<void>;
}

export async function afterRetire(
  deps: AfterRetireDeps,
  report: RetireReport,
  shells: readonly string[],
): Promise<void> {
  await deps.compact();
  for (const shell of shells) {
    try {
      await deps.tail?.forget(shell);
    } catch (error) {
      deps.logger.warn({ err: error, shell }, 'could not remove a retired shell’s output file');
    }
  }
  try {
    await deps.reporter.reportRetired(report);
  } catch (error) {
    deps.logger.error(
      { err: error, session: report.session, turn: report.turn },
      'could not report the retire',
    );
  }
}
