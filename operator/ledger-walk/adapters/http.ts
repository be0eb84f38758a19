/**
 * HTTP clients for the platform's session ledger and runtime locator (docs/legacy-reconciliation.md has the
 * contract). Responses are parsed with zod: an unexpected body is a failure (Incomplete), never a default.
 * Deadlines come from the walk's AbortSignal.
 */
import { z } from 'zod';
import type {
  LedgerReport,
  ReconciliationTarget,
  RuntimeLocation,
  RuntimeLocator,
  SessionLedger,
} from '../ports.ts';

export type HttpEndpoint = { readonly url: string; readonly token: string | undefined };

/**
 * What one ledger or locator answer may hold (issue 15: a hostile ledger must not exhaust the operator's
 * memory within the 5 s call). Beyond a limit the call fails, so the walk is Incomplete and fails closed.
 */
export const LEDGER_LIMITS = {
  /** Bytes of one response body, counted while it streams in. */
  responseBytes: 1024 * 1024,
  /** Owners of one sandbox (the index holds at most 512 references too). */
  owners: 512,
  /** Sessions of one owner. */
  sessions: 512,
  /** Any string field (ids, worktrees, reasons). */
  string: 1024,
} as const;

const text = z.string().max(LEDGER_LIMITS.string);
const allocation = z.object({ sandbox: text, provider: text });
const ledgerResponse = z.discriminatedUnion('verdict', [
  z.object({
    verdict: z.literal('owners'),
    owners: z
      .array(
        z.object({
          session: text.min(1),
          // Required: a ledger that leaves out an owner's sessions would hide its delegates, and the walk
          // locates each of them (issue 25 item 3); an empty list says the owner has only its root.
          sessions: z.array(text).max(LEDGER_LIMITS.sessions),
          worktree: text.nullish(),
          allocation: allocation.nullish(),
        }),
      )
      .max(LEDGER_LIMITS.owners),
  }),
  z.object({ verdict: z.literal('shared'), reason: text.default('') }),
  z.object({ verdict: z.literal('history-unavailable'), reason: text.default('') }),
]);
const locatorResponse = z.discriminatedUnion('state', [
  z.object({
    state: z.literal('located'),
    sandbox: text,
    provider: text,
    worktree: text.nullish(),
  }),
  z.object({ state: z.literal('not-allocated') }),
  z.object({ state: z.literal('history-unavailable'), reason: text.default('') }),
]);

/**
 * The endpoints a configuration names. A locator at its own URL gets only its own token (issue 15: a
 * locator must not learn the ledger's credential); one served at the ledger's URL is the ledger's server.
 */
export function legacyEndpoints(config: {
  readonly ledgerUrl?: string | undefined;
  readonly locatorUrl?: string | undefined;
  readonly ledgerToken: string | undefined;
  readonly locatorToken: string | undefined;
}): { ledger: HttpEndpoint; locator: HttpEndpoint } | undefined {
  if (!config.ledgerUrl) return undefined;
  const ledger = { url: config.ledgerUrl, token: config.ledgerToken };
  const locator =
    config.locatorUrl && config.locatorUrl !== config.ledgerUrl
      ? { url: config.locatorUrl, token: config.locatorToken }
      : { url: config.ledgerUrl, token: config.locatorToken ?? config.ledgerToken };
  return { ledger, locator };
}

/** Zod's issues as `field.path: message`, so the error names the field and the limit it broke. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
    .join('; ');
}

export class LegacyHttpError extends Error {
  readonly kind = 'LegacyHttpFailed';
  constructor(
    readonly endpoint: 'ledger' | 'locator',
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${endpoint}: ${message}`, options);
    this.name = 'LegacyHttpError';
  }
}

async function getJson(
  endpoint: HttpEndpoint,
  which: 'ledger' | 'locator',
  path: string,
  signal: AbortSignal,
): Promise<unknown> {
  const url = new URL(path, endpoint.url.endsWith('/') ? endpoint.url : `${endpoint.url}/`);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (endpoint.token) headers['authorization'] = `Bearer ${endpoint.token}`;
  let response: Response;
  try {
    // No redirects: one could downgrade to http or hand the token to another host.
    response = await fetch(url, { headers, signal, redirect: 'error' });
  } catch (error) {
    throw new LegacyHttpError(which, `GET ${url.pathname} failed`, { cause: error });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new LegacyHttpError(which, `GET ${url.pathname} answered HTTP ${response.status}`);
  }
  const body = await readCapped(response, which, url.pathname);
  try {
    return JSON.parse(body) as unknown;
  } catch (error) {
    throw new LegacyHttpError(which, `GET ${url.pathname} returned invalid JSON`, { cause: error });
  }
}

/** The body as text, refusing (and cancelling the stream) once it exceeds LEDGER_LIMITS.responseBytes. */
async function readCapped(response: Response, which: 'ledger' | 'locator', path: string): Promise<string> {
  const limit = LEDGER_LIMITS.responseBytes;
  const tooLarge = () =>
    new LegacyHttpError(which, `GET ${path}: response exceeds the limit of ${limit} bytes`);
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > limit) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (!response.body) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      received += value.byteLength;
      if (received > limit) {
        await reader.cancel();
        throw tooLarge();
      }
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    if (error instanceof LegacyHttpError) throw error;
    throw new LegacyHttpError(which, `GET ${path}: reading the response failed`, { cause: error });
  }
}

export function httpLedger(endpoint: HttpEndpoint): SessionLedger {
  return {
    async owners(target: ReconciliationTarget, signal: AbortSignal): Promise<LedgerReport> {
      const query = new URLSearchParams({
        provider: target.provider,
        ...(target.worktree ? { worktree: target.worktree } : {}),
      });
      const path = `v1/namespaces/${encodeURIComponent(target.namespace)}/sandboxes/${encodeURIComponent(target.sandbox)}/owners?${query.toString()}`;
      const parsed = ledgerResponse.safeParse(await getJson(endpoint, 'ledger', path, signal));
      if (!parsed.success)
        throw new LegacyHttpError('ledger', `unexpected response: ${describeIssues(parsed.error)}`, {
          cause: parsed.error,
        });
      const body = parsed.data;
      switch (body.verdict) {
        case 'shared':
          return { kind: 'Shared', reason: body.reason };
        case 'history-unavailable':
          return { kind: 'HistoryUnavailable', reason: body.reason };
        case 'owners':
          return {
            kind: 'Owners',
            owners: body.owners.map((owner) => ({
              session: owner.session,
              sessions: owner.sessions,
              worktree: owner.worktree ?? undefined,
              allocation: owner.allocation ?? undefined,
            })),
          };
      }
    },
  };
}

export function httpLocator(endpoint: HttpEndpoint): RuntimeLocator {
  return {
    async locate(session: string, signal: AbortSignal): Promise<RuntimeLocation> {
      const raw = await getJson(
        endpoint,
        'locator',
        `v1/sessions/${encodeURIComponent(session)}/runtime`,
        signal,
      );
      const parsed = locatorResponse.safeParse(raw);
      if (!parsed.success)
        throw new LegacyHttpError('locator', `unexpected response: ${describeIssues(parsed.error)}`, {
          cause: parsed.error,
        });
      const body = parsed.data;
      switch (body.state) {
        case 'located':
          return {
            kind: 'Located',
            sandbox: body.sandbox,
            provider: body.provider,
            worktree: body.worktree ?? undefined,
          };
        case 'not-allocated':
          return { kind: 'NotAllocated' };
        case 'history-unavailable':
          return { kind: 'HistoryUnavailable', reason: body.reason };
      }
    },
  };
}
