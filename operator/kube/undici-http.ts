/**
 * The HTTP layer under client-node's clients and our plain-JSON requests: undici's `request`, not `fetch`.
 * client-node's default (IsomorphicFetchHttpLibrary) goes through undici's WHATWG fetch: a Request, Headers
 * and a web ReadableStream per call, about a sixth of the operator's CPU under issue 13's bench (fetch,
 * webstreams, headers, webidl). `request` sends the same request on the same dispatcher (the pooled Agent
 * pooled-auth.ts hands the context) and reads the body as a Node stream. What fetch did beyond that is not
 * needed here: the API server does not redirect API calls, and without an Accept-Encoding it does not
 * compress, which on loopback costs bytes instead of CPU.
 */
import { ResponseContext, type RequestContext } from '@kubernetes/client-node';
import { Readable } from 'node:stream';
import { request, type Dispatcher } from 'undici';

const flat = (headers: Dispatcher.ResponseData['headers']): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]],
    ),
  );

export async function undiciSend(context: RequestContext): Promise<ResponseContext> {
  const body = context.getBody();
  if (body !== undefined && typeof body !== 'string')
    throw new TypeError('undici transport: only string request bodies are sent by the operator');
  const options: Parameters<typeof request>[1] & {} = {
    method: context.getHttpMethod(),
    headers: context.getHeaders(),
  };
  if (body !== undefined) options.body = body;
  const signal = context.getSignal();
  if (signal) options.signal = signal;
  const dispatcher = context.getDispatcher();
  if (dispatcher) options.dispatcher = dispatcher;
  const response = await request(context.getUrl(), options);
  return new ResponseContext(response.statusCode, flat(response.headers), {
    text: () => response.body.text(),
    binary: async () => Buffer.from(await response.body.arrayBuffer()),
    stream: () => Readable.toWeb(response.body) as ReadableStream<Uint8Array>,
  });
}
