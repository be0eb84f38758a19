/**
 * The client agent hosts use to talk to the sidecar over its Unix socket: register a shell right after
 * spawning it (or use `spawnRegisteredShell`), end a turn, read shell notices. A refusal is a typed error
 * carrying the endpoint's status and code (docs/sidecar.md lists them); a registration for an ended turn
 * is a value, not an error: the sidecar retires that shell with its turn.
 */
import { request } from 'node:http';
import { z } from 'zod';
import { SidecarError } from '../contract/errors.ts';
import { noticeSchema, type NoticePage } from '../contract/notice.ts';
import type { EndTurnRequest, RegisterShellRequest } from '../contract/requests.ts';

export class ReaperRequestError extends SidecarError {
  constructor(
    /** The HTTP status, or undefined when the sidecar was unreachable. */
    readonly status: number | undefined,
    /** The endpoint's error code (`InvalidRequest`, `IdentityMismatch`, …). */
    readonly code: string | undefined,
    detail: string,
    options: { readonly cause: unknown },
  ) {
    super('RequestFailed', detail, options);
  }
}

export type RegisterResult =
  | { readonly kind: 'Registered'; readonly shell: string }
  /** The turn had already ended: the sidecar retires this shell with it. */
  | { readonly kind: 'TurnEnded'; readonly shell: string; readonly retire: string };

const registeredSchema = z.object({ shell: z.string(), state: z.literal('Registered') });
const turnEndedSchema = z.object({ code: z.literal('TurnEnded'), shell: z.string(), retire: z.string() });
const errorSchema = z.object({ code: z.string(), message: z.string() });
const endTurnSchema = z.union([
  z.object({ decision: z.literal('Retire'), retire: z.string(), groups: z.int() }),
  z.object({ decision: z.literal('Keep'), reason: z.string() }),
  z.object({ decision: z.enum(['Retire', 'Keep']), duplicate: z.literal(true), finished: z.boolean() }),
]);
export type EndTurnResult = z.infer<typeof endTurnSchema>;
const noticePageSchema = z.object({ notices: z.array(noticeSchema), cursor: z.int().min(0) });

export interface ReaperClient {
  registerShell(registration: RegisterShellRequest): Promise<RegisterResult>;
  endTurn(end: EndTurnRequest): Promise<EndTurnResult>;
  /** Reads notices after `after` (acknowledging those up to it), waiting up to `waitMs` for one. */
  readNotices(after: number, waitMs?: number): Promise<NoticePage>;
  health(): Promise<boolean>;
}

export interface ReaperClientOptions {
  readonly socketPath: string;
  /** Per-request timeout, on top of a notice read's own wait. Default 10 s. */
  readonly timeoutMs?: number;
}

interface Response {
  readonly status: number;
  readonly body: unknown;
}

function call(
  options: ReaperClientOptions,
  method: string,
  path: string,
  body: unknown,
  extraMs = 0,
): Promise<Response> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: options.socketPath,
        method,
        path,
        timeout: (options.timeoutMs ?? 10_000) + extraMs,
        headers:
          text === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
            });
          } catch (error) {
            reject(
              new ReaperRequestError(res.statusCode, undefined, `${method} ${path}: the answer is not JSON`, {
                cause: error,
              }),
            );
          }
        });
        res.on('error', (error) => {
          reject(new ReaperRequestError(res.statusCode, undefined, `${method} ${path}`, { cause: error }));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (error) => {
      reject(
        new ReaperRequestError(undefined, undefined, `${method} ${path}: the sidecar is unreachable`, {
          cause: error,
        }),
      );
    });
    req.end(text);
  });
}

function expect<T>(schema: z.ZodType<T>, response: Response, what: string): T {
  const parsed = schema.safeParse(response.body);
  if (parsed.success) return parsed.data;
  const refusal = errorSchema.safeParse(response.body);
  const code = refusal.success ? refusal.data.code : undefined;
  const message = refusal.success ? refusal.data.message : 'unexpected answer';
  throw new ReaperRequestError(
    response.status,
    code,
    `${what}: ${response.status} ${code ?? ''} ${message}`,
    { cause: response.body },
  );
}

export function createReaperClient(options: ReaperClientOptions): ReaperClient {
  return {
    async registerShell(registration) {
      const response = await call(options, 'POST', '/v1/shells', registration);
      if (response.status === 409) {
        const ended = turnEndedSchema.safeParse(response.body);
        if (ended.success) return { kind: 'TurnEnded', shell: ended.data.shell, retire: ended.data.retire };
      }
      if (response.status !== 200 && response.status !== 201) expect(z.never(), response, 'register shell');
      return { kind: 'Registered', shell: expect(registeredSchema, response, 'register shell').shell };
    },
    async endTurn(end) {
      const response = await call(options, 'POST', '/v1/turns/end', end);
      if (response.status >= 300) expect(z.never(), response, 'end turn');
      return expect(endTurnSchema, response, 'end turn');
    },
    async readNotices(after, waitMs = 0) {
      const response = await call(
        options,
        'GET',
        `/v1/notices?after=${after}&waitMs=${waitMs}`,
        undefined,
        waitMs,
      );
      return expect(noticePageSchema, response, 'read notices');
    },
    async health() {
      try {
        return (await call(options, 'GET', '/healthz', undefined)).status === 200;
      } catch (error) {
        if (error instanceof ReaperRequestError && error.status === undefined) return false;
        throw error;
      }
    },
  };
}
