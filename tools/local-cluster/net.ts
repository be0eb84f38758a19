// Loopback networking helpers: free ports, HTTPS probes trusting our CA, polling with a deadline.
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

export interface HttpResult {
  readonly status: number;
  readonly body: string;
}

export interface GetOptions {
  /** PEM to trust for https URLs. */
  readonly ca?: string;
  readonly token?: string;
  readonly timeoutMs?: number;
}

/** GET `url`; a connection failure is an outcome (`status: 0`), not an exception. */
export function get(url: string, options: GetOptions = {}): Promise<HttpResult> {
  const secure = url.startsWith('https:');
  return new Promise((resolve) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
    const settings = {
      headers,
      timeout: options.timeoutMs ?? 5_000,
      ...(secure && options.ca !== undefined ? { ca: options.ca } : {}),
    };
    const req = (secure ? request : httpRequest)(url, settings, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on('error', (error) => {
        resolve({ status: 0, body: error.message });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`timed out after ${options.timeoutMs ?? 5_000}ms`)));
    req.on('error', (error) => {
      resolve({ status: 0, body: error.message });
    });
    req.end();
  });
}

export interface PollOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Checked before each attempt; a reason string aborts the wait (e.g. the process exited). */
  readonly abortIf?: () => string | null;
}

export type PollOutcome<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Polls `attempt` until it returns a value (not undefined), the deadline passes, or abortIf fires. */
export async function poll<T>(
  attempt: () => Promise<T | undefined>,
  options: PollOptions,
): Promise<PollOutcome<T>> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const abort = options.abortIf?.() ?? null;
    if (abort !== null) return { ok: false, reason: abort };
    const value = await attempt();
    if (value !== undefined) return { ok: true, value };
    if (Date.now() >= deadline) return { ok: false, reason: `not ready after ${options.timeoutMs}ms` };
    await delay(options.intervalMs ?? 100);
  }
}
