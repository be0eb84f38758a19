/**
 * Entry point of the shell reaper sidecar (same image as the operator, its own command):
 * `tsx operator/cli/sidecar.ts`. Configuration comes from the environment (operator/sidecar/contract/config.ts).
 * SIGTERM (pod termination) stops taking requests and gives running retires a few seconds; the journal
 * keeps the rest for the next start.
 */
import { loadConfig } from '../sidecar/contract/config.ts';
import { startSidecar } from '../sidecar/process/sidecar-app.ts';
import { createLogger } from './logger.ts';

const SHUTDOWN_DEADLINE_MS = 3_000;

const bootLogger = createLogger({ base: { component: 'shell-reaper' } });
try {
  const config = loadConfig(process.env);
  const logger = createLogger({ level: config.logLevel, base: { component: 'shell-reaper' } });
  const app = await startSidecar(config, logger);
  const shutdown = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down: no new requests; running retires get a short deadline');
    app.stop(SHUTDOWN_DEADLINE_MS).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
} catch (error) {
  bootLogger.fatal({ err: error }, 'the shell reaper could not start');
  process.exit(2);
}
