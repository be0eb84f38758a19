/**
 * Requests whose responses are read as plain JSON. client-node's generated clients walk every response into
 * its model classes (ObjectSerializer: 11 % of the operator's CPU under issue 13's bench), although the
 * controller reads a few fields of each through its own bounded parse. This goes through the same
 * Configuration — server, pooled authentication, middleware and the metered HTTP layer — and fails as the
 * generated clients do (an ApiException with the status and body), so `request()` treats both alike.
 */
import { ApiException, HttpMethod, type Configuration } from '@kubernetes/client-node';

export type JsonRequest = {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** The API path, e.g. /api/v1/namespaces/ns/pods. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly contentType?: string;
};

export type JsonClient = (request: JsonRequest) => Promise<unknown>;

export function jsonClient(configuration: Configuration): JsonClient {
  return async ({ method, path, query, body, contentType }) => {
    let context = configuration.baseServer.makeRequestContext(path, HttpMethod[method]);
    for (const [name, value] of Object.entries(query ?? {})) context.setQueryParam(name, value);
    context.setHeaderParam('Accept', 'application/json');
    if (body !== undefined) {
      context.setHeaderParam('Content-Type', contentType ?? 'application/json');
      context.setBody(JSON.stringify(body));
    }
    await configuration.authMethods.default?.applySecurityAuthentication(context);
    for (const middleware of configuration.middleware) context = await middleware.pre(context).toPromise();
    let response = await configuration.httpApi.send(context).toPromise();
    for (const middleware of configuration.middleware) response = await middleware.post(response).toPromise();
    const text = await response.body.text();
    const { httpStatusCode: code } = response;
    if (code < 200 || code > 299)
      throw new ApiException(code, `HTTP ${code} from ${method} ${path}`, text, response.headers);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  };
}

/** A path segment, escaped. */
export const segment = (value: string) => encodeURIComponent(value);
