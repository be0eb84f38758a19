/**
 * One WATCH request, streamed line by line. client-node's Watch swallows handler exceptions and hands out its
 * abort controller only after the response headers, so a stop could wait for the server's timeout; this
 * stream takes our AbortSignal from the start and reports how it ended as a value.
 */
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { request as send } from 'undici';

export type WatchEnd =
  | { readonly kind: 'Closed' }
  | { readonly kind: 'Gone' }
  | { readonly kind: 'Failed'; readonly status: number | undefined; readonly error: unknown };

export type WatchQuery = Record<string, string | number | boolean | undefined>;

export type WatchOptions = {
  /** Who the request says it is, for audit logs (default: undici's); the agent hosts' client names itself. */
  readonly userAgent?: string;
};

/** Bounded so a silently dead connection is noticed: the server ends watches after `timeoutSeconds` anyway. */
const INACTIVITY_MARGIN_MS = 15_000;

export async function watchStream(
  config: KubeConfig,
  path: string,
  query: WatchQuery & { timeoutSeconds: number },
  signal: AbortSignal,
  onEvent: (type: string, object: unknown) => void,
  { userAgent }: WatchOptions = {},
): Promise<WatchEnd> {
  const cluster = config.getCurrentCluster();
  if (!cluster)
    return { kind: 'Failed', status: undefined, error: new Error('kubeconfig has no current cluster') };
  const url = new URL(cluster.server + path);
  url.searchParams.set('watch', 'true');
  for (const [key, value] of Object.entries(query))
    if (value !== undefined) url.searchParams.set(key, String(value));

  const request = new AbortController();
  const stop = () => request.abort();
  signal.addEventListener('abort', stop, { once: true });
  let idle: NodeJS.Timeout | undefined;
  // Re-armed on every chunk: refresh() restarts the one timer instead of making a new one per chunk.
  const armIdle = () => {
    if (idle) {
      idle.refresh();
      return;
    }
    idle = setTimeout(stop, query.timeoutSeconds * 1000 + INACTIVITY_MARGIN_MS);
    idle.unref();
  };
  try {
    const context = new RequestContext(url.toString(), HttpMethod.GET);
    await config.applySecurityAuthentication(context);
    armIdle();
    const dispatcher = context.getDispatcher();
    // undici's request, not fetch: a watch is the operator's busiest stream, and a Node stream is cheaper
    // per event than fetch's web stream (undici-http.ts says the same of the clients).
    const response = await send(url, {
      headers: { ...context.getHeaders(), ...(userAgent === undefined ? {} : { 'user-agent': userAgent }) },
      signal: request.signal,
      ...(dispatcher ? { dispatcher } : {}),
    });
    if (response.statusCode === 410) {
      await response.body.dump();
      return { kind: 'Gone' };
    }
    if (response.statusCode < 200 || response.statusCode > 299)
      return { kind: 'Failed', status: response.statusCode, error: new Error(await response.body.text()) };
    let buffered = '';
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
      armIdle();
      buffered += decoder.decode(chunk as Buffer, { stream: true });
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line !== '') {
          const event = JSON.parse(line) as { type?: unknown; object?: unknown };
          // Any ERROR ends this watch (the server closes it next): 410 means relist; anything else
          // (an etcd restore, a storage error) is a failure, so the caller relists with backoff instead of
          // re-watching from a resourceVersion that may no longer mean anything.
          if (event.type === 'ERROR') return watchError(event.object);
          onEvent(String(event.type), event.object);
        }
        newline = buffered.indexOf('\n');
      }
    }
    return { kind: 'Closed' };
  } catch (error) {
    // Our own stop (shutdown or inactivity) ends the watch normally; the caller re-watches or exits.
    if (request.signal.aborted) return { kind: 'Closed' };
    return { kind: 'Failed', status: undefined, error };
  } finally {
    clearTimeout(idle);
    signal.removeEventListener('abort', stop);
  }
}

function watchError(status: unknown): WatchEnd {
  const { code, message } = (status ?? {}) as { code?: unknown; message?: unknown };
  if (code === 410) return { kind: 'Gone' };
  return {
    kind: 'Failed',
    status: typeof code === 'number' ? code : undefined,
    error: new Error(`watch ERROR event: ${typeof message === 'string' ? message : JSON.stringify(status)}`),
  };
}
