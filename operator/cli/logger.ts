/**
 * The one way an entry point builds its pino logger: JSON lines when stdout is not a terminal (the image, a
 * supervisor, tests, log shippers), pino-pretty's lines when a person watches a terminal, and in both the
 * same redaction, so a credential that reaches a log call never reaches the output.
 */
import { pino, type Level, type Logger, type LoggerOptions } from 'pino';
import { build as prettyStream } from 'pino-pretty';

/**
 * Where credentials can sit in what we log: the ledger's bearer token, a kubeconfig user, HTTP request
 * headers (client-node and undici errors carry them), and any field named like a secret one or two levels
 * down. fast-redact paths: `*` is one key.
 */
export const REDACT_PATHS: readonly string[] = [
  ...['token', 'bearerToken', 'ledgerToken', 'password', 'credentials', 'authorization', 'cookie'].flatMap(
    (key) => [key, `*.${key}`, `*.*.${key}`],
  ),
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  '*.*.headers.authorization',
  '*.*.headers.Authorization',
  '*.headers.cookie',
  '*.user.token',
  '*.user.password',
  '*.user["client-key-data"]',
];

export const REDACTED = '[Redacted]';

/** `auto`: pretty when stdout is a terminal. SANDBOX_OPERATOR_LOG_FORMAT=json|pretty overrides. */
export type LogFormat = 'auto' | 'json' | 'pretty';

export type LoggerSettings = {
  readonly name?: string;
  readonly base?: Record<string, unknown>;
  readonly level?: Level;
  readonly format?: LogFormat;
  /** Defaults to process.stdout.isTTY. */
  readonly isTTY?: boolean;
};

/** A decision reads as one line: `[component] key: message → verdict`, the other fields below it. */
const PRETTY_OPTIONS = {
  colorize: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,name,component,key,verdict',
  messageFormat: '{if component}[{component}] {end}{if key}{key}: {end}{msg}{if verdict} → {verdict}{end}',
} as const;

export function logFormatFrom(env: NodeJS.ProcessEnv): LogFormat {
  const value = env['SANDBOX_OPERATOR_LOG_FORMAT'];
  if (value === undefined || value === '' || value === 'auto') return 'auto';
  if (value === 'json' || value === 'pretty') return value;
  throw new Error(`SANDBOX_OPERATOR_LOG_FORMAT must be auto, json or pretty, got "${value}"`);
}

export function isPretty(settings: LoggerSettings): boolean {
  const format = settings.format ?? 'auto';
  return format === 'pretty' || (format === 'auto' && (settings.isTTY ?? process.stdout.isTTY));
}

export function loggerOptions(settings: LoggerSettings): LoggerOptions {
  return {
    ...(settings.name === undefined ? {} : { name: settings.name }),
    ...(settings.base === undefined ? {} : { base: settings.base }),
    level: settings.level ?? 'info',
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
  };
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const resolved = { format: logFormatFrom(process.env), ...settings };
  if (!isPretty(resolved)) return pino(loggerOptions(resolved));
  // pino-pretty as a stream in this thread, not as pino's transport: a transport is a worker thread that
  // loads pino-pretty by name from node_modules, which the bundles the image runs (scripts/bundle-operator.mjs)
  // have none of. Synchronous, so a line logged just before process.exit is not lost; a terminal keeps up.
  return pino(loggerOptions(resolved), prettyStream({ ...PRETTY_OPTIONS, sync: true }));
}
