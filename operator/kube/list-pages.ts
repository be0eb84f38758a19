/**
 * One page of a LIST, read as the API server wrote it. client-node's generic `KubernetesObjectApi.list`
 * deserializes a custom resource list's metadata as object metadata and drops its `continue` token, which
 * silently truncated every list of custom resources at its first page; this request keeps the list whole
 * and skips a deserialization the cache does not need.
 */
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { request } from 'undici';

export type ListPage = {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
  readonly continueToken: string | undefined;
};

/** Thrown for a non-2xx answer; `status` is the HTTP status, `body` the API server's Status as sent. */
export class ListPageError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(body);
    this.name = 'ListPageError';
  }
  /** What `statusOf` reads. */
  get code(): number {
    return this.status;
  }
}

export async function listPage(
  config: KubeConfig,
  path: string,
  query: Record<string, string | number | undefined>,
): Promise<ListPage> {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(cluster.server + path);
  for (const [key, value] of Object.entries(query))
    if (value !== undefined) url.searchParams.set(key, String(value));
  const context = new RequestContext(url.toString(), HttpMethod.GET);
  await config.applySecurityAuthentication(context);
  const dispatcher = context.getDispatcher();
  // undici's request, as the clients' HTTP layer (undici-http.ts): no web stream for a page's body.
  const response = await request(url, {
    headers: { ...context.getHeaders(), accept: 'application/json' },
    ...(dispatcher ? { dispatcher } : {}),
  });
  if (response.statusCode < 200 || response.statusCode > 299)
    throw new ListPageError(response.statusCode, await response.body.text());
  const body = (await response.body.json()) as {
    items?: unknown[];
    metadata?: { resourceVersion?: string; continue?: string };
  };
  const token = body.metadata?.continue;
  return {
    items: body.items ?? [],
    resourceVersion: body.metadata?.resourceVersion ?? '',
    continueToken: typeof token === 'string' && token !== '' ? token : undefined,
  };
}
