/**
 * The local endpoint: HTTP on a Unix socket in a volume shared with the agent container (docs/sidecar.md).
 * Routes: POST /v1/shells, POST /v1/turns/end, GET /v1/notices, GET /v1/turns, GET /healthz. Bodies are
 * capped, typed by zod, and refused with 4xx before anything is read from /proc; no route takes a group id
 * to signal.
 */
import { chmod, chown, lstat, mkdir, unlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { errnoOf, SidecarError } from '../contract/errors.ts';
import type { EndTurnOutcome, RegisterOutcome } from './reaper-outcomes.ts';
import type { ShellReaper } from './reaper.ts';
import type { TurnEndVerdict } from './turns/turn-authority.ts';
import {
  BODY_MAX_BYTES,
  endTurnRequestSchema,
  ERROR_STATUS,
  invalidRequest,
  noticeQuerySchema,
  registerShellRequestSchema,
  type EndTurnRequest,
  type ErrorBody,
  type ErrorCode,
} from '../contract/requests.ts';
import { sessionIdSchema, turnIdSchema } from '../contract/marker.ts';
import type { NoticeOutbox } from './notices/notice-outbox.ts';

export type ReaperApi = Pick<ShellReaper, 'register' | 'endTurn' | 'turnStatus'>;

export interface EndpointDeps {
  readonly reaper: ReaperApi;
  readonly outbox: NoticeOutbox;
  readonly logger: Logger;
  /** False once shutdown began: requests are answered 503. */
  readonly accepting: () => boolean;
  /**
   * Judges a turn end a caller sends against the SessionReference (turns/turn-authority.ts). Absent only when
   * the sidecar runs without a cluster, where the socket's word is all there is (docs/sidecar.md).
   */
  readonly authority?: (request: EndTurnRequest) => TurnEndVerdict;
}

type Reply = { readonly status: number; readonly body: unknown };

const refuse = (code: ErrorCode, message: string, extra: object = {}): Reply => ({
  status: ERROR_STATUS[code],
  body: { code, message, ...extra } satisfies ErrorBody,
});

const ROUTES: Readonly<Record<string, string>> = {
  '/v1/shells': 'POST',
  '/v1/turns/end': 'POST',
  '/v1/notices': 'GET',
  '/v1/turns': 'GET',
  '/healthz': 'GET',
};

/** Reads a JSON body of at most BODY_MAX_BYTES, or says why not. */
async function readJson(
  req: IncomingMessage,
): Promise<{ ok: true; value: unknown } | { ok: false; reply: Reply }> {
  if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
    return { ok: false, reply: refuse('UnsupportedMediaType', 'send application/json') };
  }
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > BODY_MAX_BYTES)
    return { ok: false, reply: refuse('PayloadTooLarge', `bodies are at most ${BODY_MAX_BYTES} bytes`) };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_MAX_BYTES)
      return { ok: false, reply: refuse('PayloadTooLarge', `bodies are at most ${BODY_MAX_BYTES} bytes`) };
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch (error) {
    return {
      ok: false,
      reply: refuse(
        'InvalidRequest',
        `the body is not JSON: ${error instanceof Error ? error.message : 'parse error'}`,
      ),
    };
  }
}

function registered(outcome: RegisterOutcome): Reply {
  switch (outcome.kind) {
    case 'Registered':
      return { status: 201, body: { shell: outcome.shell, state: 'Registered' } };
    case 'AlreadyRegistered':
      return { status: 200, body: { shell: outcome.shell, state: 'Registered' } };
    case 'Included':
      return refuse('TurnEnded', 'the turn has ended: the shell is retired with it', {
        shell: outcome.shell,
        retire: outcome.retire,
      });
    case 'Refused':
      return refuse(outcome.code, outcome.reason);
  }
}

function turnEnded(outcome: EndTurnOutcome): Reply {
  switch (outcome.kind) {
    case 'Retiring':
      return { status: 202, body: { decision: 'Retire', retire: outcome.retire, groups: outcome.groups } };
    case 'Kept':
      return { status: 200, body: { decision: 'Keep', reason: outcome.reason } };
    case 'Duplicate':
      return {
        status: 200,
        body: { decision: outcome.decision.kind, duplicate: true, finished: outcome.finished },
      };
  }
}

async function route(deps: EndpointDeps, req: IncomingMessage, url: URL, abort: AbortSignal): Promise<Reply> {
  const allowed = ROUTES[url.pathname];
  if (allowed === undefined) return refuse('NotFound', `no route ${url.pathname}`);
  if (req.method !== allowed) return refuse('MethodNotAllowed', `${url.pathname} takes ${allowed}`);
  if (url.pathname === '/healthz') return { status: 200, body: { status: 'ok' } };
  if (!deps.accepting()) return refuse('ShuttingDown', 'the sidecar is shutting down');
  if (url.pathname === '/v1/notices' || url.pathname === '/v1/turns') {
    const query = Object.fromEntries(url.searchParams);
    if (url.pathname === '/v1/turns') {
      const session = sessionIdSchema.safeParse(query['session']);
      const turn = turnIdSchema.safeParse(query['turn']);
      if (!session.success) return { status: 400, body: invalidRequest(session.error) };
      if (!turn.success) return { status: 400, body: invalidRequest(turn.error) };
      return { status: 200, body: deps.reaper.turnStatus(session.data, turn.data) };
    }
    const parsed = noticeQuerySchema.safeParse(query);
    if (!parsed.success) return { status: 400, body: invalidRequest(parsed.error) };
    return { status: 200, body: await deps.outbox.read(parsed.data.after, parsed.data.waitMs, abort) };
  }
  const body = await readJson(req);
  if (!body.ok) return body.reply;
  if (url.pathname === '/v1/turns/end') {
    const parsed = endTurnRequestSchema.safeParse(body.value);
    if (!parsed.success) return { status: 400, body: invalidRequest(parsed.error) };
    const verdict = deps.authority?.(parsed.data) ?? { ok: true };
    if (!verdict.ok) {
      deps.logger.warn(
        { request: parsed.data, reason: verdict.reason },
        'turn end refused: the SessionReference does not say so',
      );
      return refuse('Disagrees', verdict.reason);
    }
    return turnEnded(await deps.reaper.endTurn(parsed.data));
  }
  const parsed = registerShellRequestSchema.safeParse(body.value);
  if (!parsed.success) return { status: 400, body: invalidRequest(parsed.error) };
  return registered(await deps.reaper.register(parsed.data));
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function createEndpoint(deps: EndpointDeps): Server {
  const server = createServer((req, res) => {
    const abort = new AbortController();
    res.on('close', () => {
      abort.abort();
    });
    const url = new URL(req.url ?? '/', 'http://reaper.local');
    const log = deps.logger.child({ method: req.method, path: url.pathname });
    route(deps, req, url, abort.signal)
      .then((reply) => {
        if (reply.status >= 400) log.info({ status: reply.status, body: reply.body }, 'request refused');
        send(res, reply);
        // A refused oversized body is not drained: close the connection instead.
        if (reply.status === 413) req.destroy();
      })
      .catch((error: unknown) => {
        log.error({ err: error }, 'request failed');
        send(res, refuse('Internal', 'the sidecar failed to handle the request'));
      });
  });
  server.headersTimeout = 5_000;
  server.requestTimeout = 10_000;
  server.maxConnections = 64;
  server.maxHeadersCount = 32;
  return server;
}

/**
 * Listens on the Unix socket, hands it to `owner` when given, and sets its mode (the injection passes the
 * agent's user and 0600, or 0666 when a root sidecar does not know the agent's user). A stale socket from an earlier run is removed; any other file there is an error.
 */
export async function listenOnSocket(
  server: Server,
  path: string,
  mode: number,
  owner?: { readonly uid: number; readonly gid: number },
): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    const existing = await lstat(path).catch((error: unknown) => {
      if (errnoOf(error) === 'ENOENT') return undefined;
      throw error;
    });
    if (existing !== undefined && !existing.isSocket()) throw new Error(`${path} exists and is not a socket`);
    if (existing !== undefined) await unlink(path);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Its mode first, while it is still ours: once handed over, a root without CAP_FOWNER may not chmod it.
    await chmod(path, mode);
    // A root sidecar hands the socket to the agent's user (issue 12: root:root 0660 is EACCES for it).
    if (owner !== undefined) await chown(path, owner.uid, owner.gid);
  } catch (error) {
    throw new SidecarError('ListenFailed', path, { cause: error });
  }
}
