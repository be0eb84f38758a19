/**
 * Entry point of the shell reaper sidecar (same image as the operator, its own command):
 * `tsx operator/cli/sidecar.ts`. Configuration comes from the environment (operator/sidecar/contract/config.ts).
 * SIGTERM (pod termination) stops taking requests and gives running retires a few seconds; the journal
 * keeps the rest for the next start.
 */
import { loadConfig } from '../sidecar/contract/config.ts';
import type { Logger } from 'pino';
import { startSidecar, type SidecarApp } from '../sidecar/process/sidecar-app.ts';
import { createLogger } from './logger.ts';

const SHUTDOWN_DEADLINE_MS = 3_000;

const bootLogger = createLogger({ base: { component: 'shell-reaper' } });
// The handlers go in before the sidecar starts: a pod terminated while it starts (or right after its ready
// line) still stops gracefully, once it has started, instead of dying by the signal's default action.
let app: SidecarApp | undefined;
let pending: NodeJS.Signals | undefined;
let log: Logger = bootLogger;
const shutdown = (signal: NodeJS.Signals) => {
  log.info({ signal }, 'shutting down: no new requests; running retires get a short deadline');
  (app?.stop(SHUTDOWN_DEADLINE_MS) ?? Promise.resolve()).then(
    () => process.exit(0),
    (error: unknown) => {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
};
const onSignal = (signal: NodeJS.Signals) => {
  if (app === undefined) pending ??= signal;
  else shutdown(signal);
};
process.once('SIGTERM', onSignal);
process.once('SIGINT', onSignal);
try {
  const config = loadConfig(process.env);
  log = createLogger({ level: config.logLevel, base: { component: 'shell-reaper' } });
  app = await startSidecar(config, log);
  if (pending !== undefined) shutdown(pending);
} catch (error) {
  bootLogger.fatal({ err: error }, 'the shell reaper could not start');
  process.exit(2);
}
