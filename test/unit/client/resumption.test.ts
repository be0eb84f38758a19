/**
 * The TypeScript client's resume and wait against a scripted JSON client: the resume patch tests the version
 * read, a 403 is SandboxResumeForbiddenError, a changed Sandbox is read again; the wait returns once Ready and
 * fails typed at its deadline or when the sandbox goes.
 */
import { describe, expect, it } from 'vitest';
import type { JsonRequest } from '../../../operator/kube/plain-json.ts';
import {
  resumeIfSuspended,
  SandboxNotReadyError,
  SandboxResumeForbiddenError,
  waitUntilReady,
} from '../../../operator/client/resumption.ts';

/** An answer: the body, or `failing(code)` for an error with that HTTP status. */
const failing = (code: number) => ({ fail: code });

/** Answers each request with the next answer; records the requests. */
function scripted(answers: unknown[]) {
  const requests: JsonRequest[] = [];
  const json = (request: JsonRequest): Promise<unknown> => {
    requests.push(request);
    const next = answers.shift();
    if (typeof next === 'object' && next !== null && 'fail' in next)
      return Promise.reject(Object.assign(new Error(`HTTP ${String(next.fail)}`), { code: next.fail }));
    return Promise.resolve(next);
  };
  return { json, requests, left: () => answers.length };
}

const suspended = (resourceVersion: string) => ({
  metadata: { resourceVersion },
  spec: { operatingMode: 'Suspended' },
});
const readyAt = (generation: number, status: 'True' | 'False') => ({
  metadata: { generation },
  status: {
    phase: status === 'True' ? 'Running' : 'Suspended',
    conditions: [
      {
        type: 'Ready',
        status,
        reason: status === 'True' ? 'PodsReady' : 'Suspended',
        observedGeneration: generation,
      },
    ],
  },
});

describe('resumeIfSuspended', () => {
  it('patches spec.operatingMode Running, testing the version read', async () => {
    const api = scripted([{}]);
    await resumeIfSuspended(api.json, 'ns', 'sbx', suspended('42'));
    expect(api.requests).toEqual([
      {
        method: 'PATCH',
        path: '/apis/sandbox.agents.dev/v1alpha1/namespaces/ns/sandboxes/sbx',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: '42' },
          { op: 'replace', path: '/spec/operatingMode', value: 'Running' },
        ],
        contentType: 'application/json-patch+json',
      },
    ]);
  });

  it('writes nothing for a running or idle sandbox', async () => {
    const api = scripted([]);
    await resumeIfSuspended(api.json, 'ns', 'sbx', { spec: { operatingMode: 'Running' } });
    expect(api.requests).toEqual([]);
  });

  it('reads a changed Sandbox again and judges it again', async () => {
    const api = scripted([
      failing(422),
      suspended('43'),
      failing(409),
      { spec: { operatingMode: 'Running' } },
    ]);
    await resumeIfSuspended(api.json, 'ns', 'sbx', suspended('42'));
    expect(api.requests.map((r) => r.method)).toEqual(['PATCH', 'GET', 'PATCH', 'GET']);
    expect((api.requests[2]?.body as { value: string }[])[0]?.value).toBe('43');
  });

  it('gives up after 5 attempts with the conflict', async () => {
    const api = scripted(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? failing(409) : suspended(`${i}`))),
    );
    await expect(resumeIfSuspended(api.json, 'ns', 'sbx', suspended('1'))).rejects.toMatchObject({
      kind: 'KubeRequestFailed',
      status: 409,
    });
    expect(api.requests.filter((r) => r.method === 'PATCH')).toHaveLength(5);
  });

  it('fails typed when this identity may not patch the Sandbox; other failures as they are', async () => {
    const forbidden = resumeIfSuspended(scripted([failing(403)]).json, 'ns', 'sbx', suspended('1'));
    await expect(forbidden).rejects.toBeInstanceOf(SandboxResumeForbiddenError);
    await expect(forbidden).rejects.toMatchObject({ kind: 'SandboxResumeForbidden', sandbox: 'sbx' });
    await expect(
      resumeIfSuspended(scripted([failing(500)]).json, 'ns', 'sbx', suspended('1')),
    ).rejects.toMatchObject({
      kind: 'KubeRequestFailed',
      status: 500,
    });
  });
});

describe('waitUntilReady', () => {
  /** A clock that moves only when the wait sleeps: each read costs no time. */
  const clock = () => {
    let now = 0;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  it('returns once Ready for the current generation', async () => {
    const api = scripted([readyAt(2, 'False'), readyAt(2, 'True')]);
    await waitUntilReady(api.json, 'ns', 'sbx', { deadlineMs: 5_000, pollMs: 1 });
    expect(api.left()).toBe(0);
  });

  it('fails at its deadline saying what it last saw', async () => {
    const time = clock();
    const api = scripted(Array.from({ length: 50 }, () => readyAt(2, 'False')));
    const json = (request: JsonRequest) => {
      time.advance(100);
      return api.json(request);
    };
    const late = waitUntilReady(json, 'ns', 'sbx', { deadlineMs: 250, pollMs: 1 }, time.now);
    await expect(late).rejects.toBeInstanceOf(SandboxNotReadyError);
    await expect(late).rejects.toMatchObject({
      kind: 'SandboxNotReady',
      reason: 'Deadline',
      deadlineMs: 250,
      seen: 'phase Suspended, Ready Suspended',
    });
  });

  it('fails as soon as the sandbox is being deleted or gone', async () => {
    const deleting = { metadata: { deletionTimestamp: '2026-12-01T00:00:00Z' } };
    await expect(
      waitUntilReady(scripted([deleting]).json, 'ns', 'sbx', { deadlineMs: 5_000 }),
    ).rejects.toMatchObject({ reason: 'Deleting' });
    await expect(
      waitUntilReady(scripted([readyAt(1, 'False'), failing(404)]).json, 'ns', 'sbx', {
        deadlineMs: 5_000,
        pollMs: 1,
      }),
    ).rejects.toMatchObject({ reason: 'Gone', seen: 'phase Suspended, Ready Suspended' });
  });
});
