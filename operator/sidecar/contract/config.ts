/**
 * The sidecar's configuration, from its environment (the controller injects it). Every default is here,
 * once; docs/sidecar.md lists them and a unit test asserts they match.
 */
import { z } from 'zod';
import { REAPER_GRACE_SECONDS_MAX } from '../../api/limits.ts';
import { SidecarError } from './errors.ts';

export const CONFIG_ENV = {
  socket: 'SANDBOX_REAPER_SOCKET',
  socketMode: 'SANDBOX_REAPER_SOCKET_MODE',
  socketOwner: 'SANDBOX_REAPER_SOCKET_OWNER',
  mode: 'SANDBOX_REAPER_MODE',
  stateDir: 'SANDBOX_REAPER_STATE_DIR',
  outputDir: 'SANDBOX_REAPER_OUTPUT_DIR',
  graceSeconds: 'SANDBOX_REAPER_GRACE_SECONDS',
  killTimeoutSeconds: 'SANDBOX_REAPER_KILL_TIMEOUT_SECONDS',
  noticeHoldMs: 'SANDBOX_REAPER_NOTICE_HOLD_MS',
  pollMs: 'SANDBOX_REAPER_POLL_MS',
  namespace: 'SANDBOX_REAPER_NAMESPACE',
  sandbox: 'SANDBOX_REAPER_SANDBOX',
  podName: 'SANDBOX_REAPER_POD_NAME',
  logLevel: 'LOG_LEVEL',
} as const;

export const CONFIG_DEFAULTS = {
  socket: '/var/run/sandbox-reaper/reaper.sock',
  socketMode: 0o660,
  stateDir: '/var/lib/sandbox-reaper',
  outputDir: '/var/run/sandbox-reaper-output',
  graceSeconds: 5,
  killTimeoutSeconds: 5,
  noticeHoldMs: 1000,
  pollMs: 500,
  logLevel: 'info',
} as const;

const integer = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/)
    .transform(Number)
    .pipe(z.int().min(min).max(max))
    .default(fallback);

const configSchema = z.object({
  socket: z.string().startsWith('/').default(CONFIG_DEFAULTS.socket),
  socketMode: z
    .string()
    .regex(/^0?[0-7]{3}$/)
    .transform((text) => parseInt(text, 8))
    .default(CONFIG_DEFAULTS.socketMode),
  /** `uid:gid` the socket is handed to after listening (a root sidecar serving a non-root agent). */
  socketOwner: z
    .string()
    .regex(/^\d{1,10}:\d{1,10}$/)
    .transform((text) => {
      const [uid, gid] = text.split(':').map(Number);
      return { uid: uid ?? 0, gid: gid ?? 0 };
    })
    .optional(),
  /** The privilege mode the operator injected (informational: logged at start). */
  mode: z.enum(['SameUser', 'Privileged']).optional(),
  stateDir: z.string().startsWith('/').default(CONFIG_DEFAULTS.stateDir),
  outputDir: z.string().startsWith('/').default(CONFIG_DEFAULTS.outputDir),
  graceSeconds: integer(1, REAPER_GRACE_SECONDS_MAX, CONFIG_DEFAULTS.graceSeconds),
  killTimeoutSeconds: integer(1, 300, CONFIG_DEFAULTS.killTimeoutSeconds),
  noticeHoldMs: integer(0, 60_000, CONFIG_DEFAULTS.noticeHoldMs),
  pollMs: integer(10, 60_000, CONFIG_DEFAULTS.pollMs),
  namespace: z.string().min(1).optional(),
  sandbox: z.string().min(1).optional(),
  podName: z.string().min(1).optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default(CONFIG_DEFAULTS.logLevel),
});
export type SidecarConfig = z.infer<typeof configSchema>;

/** Reads the configuration; an invalid value is a typed error naming the variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): SidecarConfig {
  const raw = Object.fromEntries(
    Object.entries(CONFIG_ENV).map(([field, name]) => [field, env[name] === '' ? undefined : env[name]]),
  );
  const parsed = configSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path[0];
  const name =
    typeof field === 'string' && field in CONFIG_ENV ? CONFIG_ENV[field as keyof typeof CONFIG_ENV] : '?';
  throw new SidecarError('ConfigInvalid', `${name}: ${issue?.message ?? 'invalid'}`, { cause: parsed.error });
}
