/**
 * Joins the watch and the status reporter: the reporter names SessionReferences from the watch's cache,
 * and a report made before the watch has listed (a retire resumed at start) waits for that first list.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ReferenceFacts } from '../turns/turn-authority.ts';
import { startReferenceWatch, type ReferenceWatch } from './reference-watch.ts';
import { createKubeReporter } from './status-reporter.ts';
import type { RetireReporter, TurnEndReceiver } from './ports.ts';

export interface ReferenceReporterOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly sandbox: string;
  readonly podName: string | undefined;
  readonly logger: Logger;
}

export interface ReferenceReporter {
  readonly reporter: RetireReporter;
  /** What a session's reference says; undefined before the first list or when no reference names it. */
  factsOf(session: string): ReferenceFacts | undefined;
  /** Starts the watch, which sends the turn ends it sees straight to `turns`; resolves after its first list. */
  watch(turns: TurnEndReceiver): Promise<ReferenceWatch>;
}

export function createReferenceReporter(options: ReferenceReporterOptions): ReferenceReporter {
  let current: ReferenceWatch | undefined;
  let listed: () => void = () => undefined;
  const firstList = new Promise<void>((resolve) => {
    listed = resolve;
  });
  const reporter = createKubeReporter({
    ...options,
    referenceOf: (session) => current?.referenceOf(session),
  });
  return {
    reporter: {
      async reportRetired(report) {
        await firstList;
        await reporter.reportRetired(report);
      },
      async reportFailure(failure) {
        await firstList;
        await reporter.reportFailure(failure);
      },
    },
    factsOf: (session) => current?.factsOf(session),
    async watch(turns) {
      current = await startReferenceWatch({ ...options, turns });
      listed();
      return current;
    },
  };
}
