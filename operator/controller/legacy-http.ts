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
} from '../reconcile/ports.ts';

export type HttpEndpoint = { readonly url: string; readonly token: string | undefined };

const allocation = z.object({ sandbox: z.string(), provider: z.string() });
const ledgerResponse = z.discriminatedUnion('verdict', [
  z.object({
    verdict: z.literal('owners'),
    owners: z.array(
      z.object({
        session: z.string().min(1),
        sessions: z.array(z.string()).default([]),
        worktree: z.string().nullish(),
        allocation: allocation.nullish(),
      }),
    ),
  }),
  z.object({ verdict: z.literal('shared'), reason: z.string().default('') }),
  z.object({ verdict: z.literal('history-unavailable'), reason: z.string().default('') }),
]);
const locatorResponse = z.discriminatedUnion('state', [
  z.object({
    state: z.literal('located'),
    sandbox: z.string(),
    provider: z.string(),
    worktree: z.string().nullish(),
  }),
  z.object({ state: z.literal('not-allocated') }),
  z.object({ state: z.literal('history-unavailable'), reason: z.string().default('') }),
]);

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
    response = await fetch(url, { headers, signal });
  } catch (error) {
    throw new LegacyHttpError(which, `GET ${url.pathname} failed`, { cause: error });
  }
  if (!response.ok) throw new LegacyHttpError(which, `GET ${url.pathname} answered HTTP ${response.status}`);
  try {
    return await response.json();
  } catch (error) {
    throw new LegacyHttpError(which, `GET ${url.pathname} returned invalid JSON`, { cause: error });
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
        throw new LegacyHttpError('ledger', `unexpected response: ${parsed.error.message}`, {
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
        throw new LegacyHttpError('locator', `unexpected response: ${parsed.error.message}`, {
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
