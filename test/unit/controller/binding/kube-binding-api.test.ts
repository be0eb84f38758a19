/**
 * The binding's ports on a scripted plain-JSON client: the paths, content types and preconditions each
 * write carries, and how the API server's answers (409, 422, 404) become values.
 */
import { ApiException } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { kubeBindingPorts } from '../../../../operator/controller/binding/kube-binding-api.ts';
import type { JsonRequest } from '../../../../operator/kube/plain-json.ts';
import { claimRecord, poolSandbox } from './fixtures.ts';

/** A body to answer with, or `failing(status)`. */
type Answer = unknown;
const failing = (status: number) => ({ status });

function scripted(answers: Answer[]) {
  const requests: JsonRequest[] = [];
  const json = (request: JsonRequest) => {
    requests.push(request);
    const answer = answers.shift();
    if (typeof answer === 'object' && answer !== null && 'status' in answer) {
      const { status } = answer as { status: number };
      return Promise.reject(new ApiException(status, `HTTP ${status}`, '{"message":"no"}', {}));
    }
    return Promise.resolve(answer);
  };
  const events = { record: () => undefined };
  return { ports: kubeBindingPorts({ config: new KubeConfig(), json }, events), requests };
}

const BASE = '/apis/sandbox.agents.dev/v1alpha1/namespaces/team-a';
const stored = { metadata: { name: 'p-1', namespace: 'team-a', uid: 'u', resourceVersion: '11' } };

describe('the binding’s Kubernetes ports', () => {
  it('bind: a JSON Patch on the sandbox; a failed test (422) or a conflict is Lost, a 404 Gone', async () => {
    const { ports, requests } = scripted([stored, failing(422), failing(409), failing(404), failing(500)]);
    const ops = [{ op: 'test' as const, path: '/metadata/resourceVersion', value: '10' }];
    expect(await ports.sandboxes.bind(poolSandbox('p-1'), ops)).toMatchObject({
      name: 'p-1',
      resourceVersion: '11',
    });
    expect(requests[0]).toMatchObject({
      method: 'PATCH',
      path: `${BASE}/sandboxes/p-1`,
      body: ops,
      contentType: 'application/json-patch+json',
    });
    expect(await ports.sandboxes.bind(poolSandbox('p-1'), ops)).toEqual({ kind: 'Lost' });
    expect(await ports.sandboxes.bind(poolSandbox('p-1'), ops)).toEqual({ kind: 'Lost' });
    expect(await ports.sandboxes.bind(poolSandbox('p-1'), ops)).toEqual({ kind: 'Gone' });
    await expect(ports.sandboxes.bind(poolSandbox('p-1'), ops)).rejects.toThrow('HTTP 500');
  });

  it('deletes a sandbox and a reference with a uid precondition; another incarnation or none is false', async () => {
    const { ports, requests } = scripted([{}, failing(409), failing(404), {}, {}]);
    expect(await ports.sandboxes.delete(poolSandbox('p-1'))).toBe(true);
    expect(requests[0]).toEqual({
      method: 'DELETE',
      path: `${BASE}/sandboxes/p-1`,
      body: { preconditions: { uid: 'p-1-uid' } },
    });
    expect(await ports.sandboxes.delete(poolSandbox('p-1'))).toBe(false);
    expect(await ports.sandboxes.delete(poolSandbox('p-1'))).toBe(false);
    expect(await ports.references.delete('team-a', { name: 'r', uid: 'ru', raw: {} })).toBe(true);
    expect(requests[3]).toEqual({
      method: 'DELETE',
      path: `${BASE}/sessionreferences/r`,
      body: { preconditions: { uid: 'ru' } },
    });
    // A reference the binding made is withdrawn only as it made it.
    expect(
      await ports.references.delete('team-a', { name: 'r', uid: 'ru', resourceVersion: '9', raw: {} }),
    ).toBe(true);
    expect(requests[4]).toMatchObject({ body: { preconditions: { uid: 'ru', resourceVersion: '9' } } });
  });

  it('creates a reference, or on 409 reads the one stored under its name', async () => {
    const { ports, requests } = scripted([
      { metadata: { uid: 'new', resourceVersion: '7' } },
      failing(409),
      { metadata: { name: 'r', uid: 'old' }, spec: { session: 's' } },
    ]);
    const body = { metadata: { name: 'r' }, spec: {} };
    expect(await ports.references.create('team-a', body)).toEqual({
      kind: 'Created',
      uid: 'new',
      resourceVersion: '7',
    });
    expect(await ports.references.create('team-a', body)).toEqual({
      kind: 'Exists',
      stored: { name: 'r', uid: 'old', raw: { metadata: { name: 'r', uid: 'old' }, spec: { session: 's' } } },
    });
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST ${BASE}/sessionreferences`,
      `POST ${BASE}/sessionreferences`,
      `GET ${BASE}/sessionreferences/r`,
    ]);
  });

  it('lists a claim’s sandboxes and references by its label (consistent reads)', async () => {
    const { ports, requests } = scripted([
      { items: [stored] },
      { items: [{ metadata: { name: 'r', uid: 'ru' } }] },
    ]);
    expect((await ports.sandboxes.listOfClaim('team-a', 'claim-1')).map((s) => s.name)).toEqual(['p-1']);
    expect(await ports.references.listOfClaim('team-a', 'claim-1')).toMatchObject([{ name: 'r', uid: 'ru' }]);
    for (const request of requests) {
      expect(request.query).toEqual({ labelSelector: 'sandbox.agents.dev/sandbox-claim=claim-1' });
      expect(request.query).not.toHaveProperty('resourceVersion');
    }
  });

  it('writes the claim’s status as a merge patch bound to its uid, and its finalizer as a JSON Patch', async () => {
    const { ports, requests } = scripted([{}, {}, failing(422), failing(404)]);
    await ports.claims.writeStatus(claimRecord(), { sandbox: 's' });
    expect(requests[0]).toMatchObject({
      method: 'PATCH',
      path: `${BASE}/sandboxclaims/claim-1/status`,
      body: { metadata: { uid: 'claim-uid-1' }, status: { sandbox: 's' } },
      contentType: 'application/merge-patch+json',
    });
    const ops = [{ op: 'add' as const, path: '/metadata/finalizers/-', value: 'f' }];
    expect(await ports.claims.patchMetadata(claimRecord(), ops)).toBe('Written');
    expect(requests[1]).toMatchObject({
      path: `${BASE}/sandboxclaims/claim-1`,
      contentType: 'application/json-patch+json',
    });
    expect(await ports.claims.patchMetadata(claimRecord(), ops)).toEqual({ kind: 'Lost' });
    expect(await ports.claims.patchMetadata(claimRecord(), ops)).toEqual({ kind: 'Gone' });
  });

  it('reads a pool’s uid and template, a template’s generation and spec; a missing one is undefined', async () => {
    const { ports } = scripted([
      { metadata: { name: 'pool', namespace: 'team-a', uid: 'pu' }, spec: { templateRef: { name: 't' } } },
      failing(404),
      {
        metadata: { name: 'old', namespace: 'team-a', uid: 'po', deletionTimestamp: '2026-12-03T07:00:00Z' },
      },
      { metadata: { generation: 4 }, spec: { podTemplate: {} } },
      failing(404),
      { metadata: {}, spec: 'x' },
    ]);
    expect(await ports.blueprints.readPool('team-a', 'pool')).toEqual({
      namespace: 'team-a',
      name: 'pool',
      uid: 'pu',
      templateName: 't',
      deleting: false,
    });
    expect(await ports.blueprints.readPool('team-a', 'gone')).toBeUndefined();
    expect(await ports.blueprints.readPool('team-a', 'old')).toMatchObject({
      uid: 'po',
      templateName: undefined,
      deleting: true,
    });
    expect(await ports.blueprints.readTemplate('team-a', 't')).toEqual({
      generation: 4,
      spec: { podTemplate: {} },
    });
    expect(await ports.blueprints.readTemplate('team-a', 'gone')).toBeUndefined();
    expect(await ports.blueprints.readTemplate('team-a', 'odd')).toEqual({ generation: 0, spec: {} });
  });

  it('reads a sandbox raw for the fence, and creates a cold one (409: its name was taken)', async () => {
    const { ports, requests } = scripted([stored, failing(404), stored, failing(409)]);
    expect(await ports.reads.readRaw('team-a', 'p-1')).toEqual({ kind: 'Json', body: stored });
    expect(await ports.reads.readRaw('team-a', 'p-1')).toEqual({ kind: 'Gone' });
    expect(await ports.sandboxes.create('team-a', {})).toMatchObject({ name: 'p-1' });
    expect(requests[2]).toMatchObject({ method: 'POST', path: `${BASE}/sandboxes` });
    expect(await ports.sandboxes.create('team-a', {})).toEqual({ kind: 'Lost' });
  });
});
