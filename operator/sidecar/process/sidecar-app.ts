/**
 * Assembles the sidecar from its configuration: real ports, the reaper, the local endpoint and, when a
 * namespace and sandbox are configured, the SessionReference watch and status reporter. The CLI entry
 * point (operator/cli/sidecar.ts) only loads the config and handles signals.
 */
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { monotonicClock } from './os/clock.ts';
import type { SidecarConfig } from '../contract/config.ts';
import { SidecarError } from '../contract/errors.ts';
import { createEndpoint, listenOnSocket } from './http-server.ts';
import { journalEntrySchema } from './ledger/journal-entries.ts';
import { createJsonlJournal } from './os/jsonl-journal.ts';
import { createReferenceReporter } from './kube/reference-reporter.ts';
import { createNoticeOutbox } from './notices/notice-outbox.ts';
import { createOutputTail } from './os/output-tail.ts';
import type { ProcessTable, Signaller } from './os/ports.ts';
import { parseProcStat } from '../contract/proc-stat.ts';
import { createProcTable } from './os/proc-table.ts';
import { ShellReaper } from './reaper.ts';
import { createSignaller } from './os/signaller.ts';
import { judgeTurnEnd } from './turns/turn-authority.ts';
import type { RetireReporter } from './kube/ports.ts';

export interface SidecarApp {
  readonly reaper: ShellReaper;
  readonly server: Server;
  /** Stops taking requests, lets running retires use up to `deadlineMs`, and closes the journal. */
  stop(deadlineMs: number): Promise<void>;
}

export interface SidecarOverrides {
  readonly kubeConfig?: KubeConfig;
  readonly table?: ProcessTable;
  readonly signaller?: Signaller;
}

/** The sidecar's own pid and group, which the signaller never targets. */
export async function ownIdentity(): Promise<{ ownPid: number; ownPgid: number }> {
  const parsed = parseProcStat(await readFile('/proc/self/stat', 'utf8'));
  if (!parsed.ok)
    throw new SidecarError('ProcUnavailable', `/proc/self/stat: ${parsed.reason}`, { cause: parsed });
  return { ownPid: parsed.stat.pid, ownPgid: parsed.stat.pgrp };
}

const logReporter = (logger: Logger): RetireReporter => ({
  reportRetired(report) {
    logger.info({ report }, 'retire recorded (no cluster configured: log only)');
    return Promise.resolve();
  },
  reportFailure(failure) {
    logger.warn({ failure }, 'retire failure recorded (no cluster configured: log only)');
    return Promise.resolve();
  },
});

export async function startSidecar(
  config: SidecarConfig,
  logger: Logger,
  overrides: SidecarOverrides = {},
): Promise<SidecarApp> {
  const clock = monotonicClock;
  const signaller = overrides.signaller ?? createSignaller(await ownIdentity());
  const journal = createJsonlJournal(`${config.stateDir}/journal.jsonl`, journalEntrySchema);
  const outbox = createNoticeOutbox(journal, clock, logger);
  const cluster =
    config.namespace !== undefined && config.sandbox !== undefined
      ? {
          namespace: config.namespace,
          sandbox: config.sandbox,
          kubeConfig: overrides.kubeConfig ?? defaultKubeConfig(),
        }
      : undefined;
  const references =
    cluster === undefined
      ? undefined
      : createReferenceReporter({ ...cluster, podName: config.podName, logger });
  const reaper = new ShellReaper({
    table: overrides.table ?? createProcTable(),
    signaller,
    journal,
    outbox,
    clock,
    reporter: references?.reporter ?? logReporter(logger),
    logger,
    tail: createOutputTail(config.outputDir),
    options: {
      graceMs: config.graceSeconds * 1000,
      killTimeoutMs: config.killTimeoutSeconds * 1000,
      noticeHoldMs: config.noticeHoldMs,
      pollMs: config.pollMs,
    },
  });
  await reaper.start();
  let accepting = true;
  const server = createEndpoint({
    reaper,
    outbox,
    logger,
    accepting: () => accepting,
    // With a cluster the SessionReference decides; before its first list nothing is confirmed.
    ...(references === undefined
      ? {}
      : { authority: (request) => judgeTurnEnd(request, references.factsOf(request.session)) }),
  });
  if (references === undefined)
    logger.warn(
      'no cluster configured: turn ends sent to the socket are believed as sent (development only)',
    );
  await listenOnSocket(server, config.socket, config.socketMode, config.socketOwner);
  // The watch sends turn ends straight to the reaper, which queues each on its lock as it is seen.
  const watch = await references?.watch(reaper);
  // After the first list: every turn that ended while the sidecar was down is fenced before any exit of
  // its shells can be published.
  reaper.startMonitor();
  logger.info(
    {
      socket: config.socket,
      cluster: cluster === undefined ? 'none' : `${cluster.namespace}/${cluster.sandbox}`,
      graceSeconds: config.graceSeconds,
      mode: config.mode ?? 'unset',
      socketOwner: config.socketOwner ?? 'self',
    },
    'shell reaper ready',
  );
  return {
    reaper,
    server,
    async stop(deadlineMs) {
      accepting = false;
      server.close();
      server.closeAllConnections();
      await watch?.stop();
      await reaper.stop(deadlineMs);
      await journal.close();
    },
  };
}

function defaultKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}
