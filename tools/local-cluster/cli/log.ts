/**
 * The launcher's logger: JSON lines unless a person watches a terminal (SANDBOX_OPERATOR_LOG_FORMAT=json|pretty
 * overrides), as the operator's own (operator/cli/logger.ts), whose lines interleave with these.
 */
import { pino, type Logger } from 'pino';
import { build as prettyStream } from 'pino-pretty';

export function launcherLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  const format = env['SANDBOX_OPERATOR_LOG_FORMAT'] ?? 'auto';
  const pretty = format === 'pretty' || ((format === 'auto' || format === '') && process.stdout.isTTY);
  const options = { name: 'npm-start', level: 'info' as const };
  if (!pretty) return pino(options);
  return pino(
    options,
    prettyStream({
      colorize: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,name',
      sync: true,
    }),
  );
}
