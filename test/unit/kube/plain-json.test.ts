import {
  ApiException,
  createConfiguration,
  ResponseContext,
  SelfDecodingBody,
  ServerConfiguration,
  wrapHttpLibrary,
  type RequestContext,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { jsonClient } from '../../../operator/kube/plain-json.ts';

/** A client over an HTTP layer that records the request and answers `status` with `body`. */
function clientAnswering(status: number, body: string) {
  const sent: RequestContext[] = [];
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration('https://127.0.0.1:6443', {}),
    httpApi: wrapHttpLibrary({
      send: (context) => {
        sent.push(context);
        const response = new SelfDecodingBody(Promise.resolve(Buffer.from(body)));
        return Promise.resolve(new ResponseContext(status, {}, response));
      },
    }),
  });
  return { json: jsonClient(configuration), sent };
}

describe('jsonClient', () => {
  it('sends the path, query, content type and body, and answers the response as plain JSON', async () => {
    const { json, sent } = clientAnswering(200, '{"items":[{"metadata":{"name":"p"}}]}');
    const answer = await json({
      method: 'PATCH',
      path: '/api/v1/namespaces/ns/pods/p',
      query: { fieldManager: 'sandbox-operator' },
      body: [{ op: 'test', path: '/metadata/uid', value: 'u' }],
      contentType: 'application/json-patch+json',
    });
    expect(answer).toEqual({ items: [{ metadata: { name: 'p' } }] });
    const [request] = sent;
    expect(request?.getUrl()).toBe(
      'https://127.0.0.1:6443/api/v1/namespaces/ns/pods/p?fieldManager=sandbox-operator',
    );
    expect(request?.getHttpMethod()).toBe('PATCH');
    expect(request?.getHeaders()['Content-Type']).toBe('application/json-patch+json');
    expect(request?.getBody()).toBe('[{"op":"test","path":"/metadata/uid","value":"u"}]');
  });

  it('fails as the generated clients do: an ApiException with the status and the body', async () => {
    const { json } = clientAnswering(404, '{"kind":"Status","message":"pods \\"p\\" not found"}');
    const failure = await json({ method: 'GET', path: '/api/v1/namespaces/ns/pods/p' }).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(ApiException);
    expect((failure as ApiException<string>).code).toBe(404);
    expect((failure as ApiException<string>).body).toContain('not found');
  });
});
