/**
 * The HTTP layer under client-node's generated clients, counting each request as client-go does:
 * rest_client_requests_total{code, method, host} and rest_client_request_duration_seconds{verb, host}.
 * Measured here, not in `request()`, so every page of a list, every retry and the lease's calls count,
 * each with its real status code.
 */
import { wrapHttpLibrary, type RequestContext, type ResponseContext } from '@kubernetes/client-node';
import { undiciSend } from './undici-http.ts';

export type RequestObserver = (request: {
  readonly method: string;
  readonly host: string;
  /** The HTTP status, or `<error>` when no response came (client-go's label for a transport error). */
  readonly code: string;
  readonly seconds: number;
}) => void;

export function meteredHttp(
  observe: RequestObserver,
  inner: (context: RequestContext) => Promise<ResponseContext> = undiciSend,
) {
  return wrapHttpLibrary({
    send: async (context: RequestContext): Promise<ResponseContext> => {
      const started = performance.now();
      const method: string = context.getHttpMethod();
      const host = new URL(context.getUrl()).host;
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const response = await inner(context);
        observe({ method, host, code: String(response.httpStatusCode), seconds: seconds() });
        return response;
      } catch (error) {
        observe({ method, host, code: '<error>', seconds: seconds() });
        throw error;
      }
    },
  });
}
