/**
 * The wait of claim() against a scripted API server: it watches the one claim from the version the create
 * answered (no read), returns on the event that makes it Ready, opens a watch that ended again from the last
 * version, reads the claim after a 410 and watches from the version read, fails typed on a refusal, on a
 * deletion and at the deadline (which stops the open watch), saying what the conditions said last.
 */
import { describe, expect, it } from 'vitest';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import type { JsonRequest } from '../../../operator/kube/plain-json.ts';
import type { WatchEnd, WatchQuery } from '../../../operator/kube/watch-stream.ts';
import {
  SandboxClaimNotReadyError,
  waitForClaim,
  type ClaimWaitPorts,
} from '../../../operator/client/claim-wait.ts';

const CLAIMS = '/apis/sandbox.agents.dev/v1alpha1/namespaces/ns/sandboxclaims';

const claim = (resourceVersion: string, status?: object) => ({
  metadata: { name: 'c-1', namespace: 'ns', resourceVersion },
  ...(status === undefined ? {} : { status }),
});
const binding = {
  conditions: [{ type: 'Bound', status: 'False', reason: 'WarmPoolNotFound', message: 'no pool p' }],
};
const ready = {
  sandbox: 'sbx-1',
  reference: 'sbx-1-0123456789abcdef',
  launchType: 'Warm',
  conditions: [{ type: 'Ready', status: 'True', reason: 'SandboxReady' }],
};

/** A watch's script: events it delivers, then how it ends; `hang` holds it open until it is stopped. */
type WatchScript = { events?: [string, unknown][]; end: WatchEnd | 'hang' };

function scripted(reads: unknown[], watches: WatchScript[]) {
  const requests: JsonRequest[] = [];
  const opened: { path: string; query: WatchQuery; stoppedAt?: number }[] = [];
  const ports: ClaimWaitPorts = {
    now: Date.now,
    json: (request) => {
      requests.push(request);
      const next = reads.shift();
      if (typeof next === 'object' && next !== null && 'fail' in next)
        return Promise.reject(Object.assign(new Error('refused'), { code: next.fail }));
      return Promise.resolve(next);
    },
    watch: async (path, query, signal, onEvent) => {
      const record: (typeof opened)[number] = { path, query };
      opened.push(record);
      const script = watches.shift();
      if (script === undefined) throw new Error(`unexpected watch from ${String(query.resourceVersion)}`);
      for (const [type, object] of script.events ?? []) {
        await Promise.resolve();
        if (signal.aborted) break;
        onEvent(type, object);
      }
      if (script.end !== 'hang' && !signal.aborted) return script.end;
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      record.stoppedAt = Date.now();
      return { kind: 'Closed' };
    },
  };
  return { ports, requests, opened, left: () => ({ reads: reads.length, watches: watches.length }) };
}

describe('waitForClaim', () => {
  it("watches the one claim from the create's version and returns on the event that makes it Ready", async () => {
    const api = scripted(
      [],
      [
        {
          events: [
            ['MODIFIED', claim('11', binding)],
            ['MODIFIED', claim('12', ready)],
          ],
          end: 'hang',
        },
      ],
    );
    const result = await waitForClaim(api.ports, 'ns', 'c-1', 5_000, claim('10'));
    expect(result).toEqual({
      claim: 'c-1',
      sandbox: 'sbx-1',
      reference: 'sbx-1-0123456789abcdef',
      launchType: 'Warm',
    });
    expect(api.requests).toEqual([]);
    expect(api.opened).toEqual([
      {
        path: CLAIMS,
        query: {
          fieldSelector: 'metadata.name=c-1',
          resourceVersion: '10',
          allowWatchBookmarks: true,
          timeoutSeconds: 5,
        },
        stoppedAt: expect.any(Number),
      },
    ]);
  });

  it('an existing claim is read first, and watched from the version read', async () => {
    const api = scripted(
      [claim('40', binding)],
      [{ events: [['MODIFIED', claim('41', ready)]], end: 'hang' }],
    );
    await expect(waitForClaim(api.ports, 'ns', 'c-1', 5_000)).resolves.toMatchObject({ sandbox: 'sbx-1' });
    expect(api.requests).toEqual([{ method: 'GET', path: `${CLAIMS}/c-1` }]);
    expect(api.opened.map((w) => w.query.resourceVersion)).toEqual(['40']);
  });

  it('a watch that ends or loses its connection is opened again from the last version; a 410 reads first', async () => {
    const api = scripted(
      [claim('90', binding)],
      [
        { events: [['BOOKMARK', { metadata: { resourceVersion: '20' } }]], end: { kind: 'Closed' } },
        {
          events: [['MODIFIED', claim('25', binding)]],
          end: { kind: 'Failed', status: undefined, error: 1 },
        },
        { end: { kind: 'Gone' } },
        { events: [['MODIFIED', claim('91', ready)]], end: 'hang' },
      ],
    );
    await expect(waitForClaim(api.ports, 'ns', 'c-1', 5_000, claim('10'))).resolves.toMatchObject({
      launchType: 'Warm',
    });
    expect(api.opened.map((w) => w.query.resourceVersion)).toEqual(['10', '20', '25', '90']);
    expect(api.requests.map((r) => r.method)).toEqual(['GET']);
    expect(api.left()).toEqual({ reads: 0, watches: 0 });
  });

  it('at the deadline it stops the open watch and fails saying what the conditions said last', async () => {
    const api = scripted([], [{ events: [['MODIFIED', claim('11', binding)]], end: 'hang' }]);
    const started = Date.now();
    const failed = await waitForClaim(api.ports, 'ns', 'c-1', 150, claim('10')).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(SandboxClaimNotReadyError);
    expect(failed).toMatchObject({
      reason: 'Deadline',
      claim: 'c-1',
      deadlineMs: 150,
      seen: 'Bound False WarmPoolNotFound: no pool p',
    });
    expect((failed as Error).message).toContain('within 150 ms (last seen: Bound False WarmPoolNotFound');
    expect(api.opened[0]?.query.timeoutSeconds).toBe(1);
    expect(api.opened[0]?.stoppedAt).toBeGreaterThanOrEqual(started + 150);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a deadline after failing watches names the last failure as its cause', async () => {
    const lost = new Error('socket hang up');
    const api = scripted(
      [],
      Array.from({ length: 20 }, () => ({
        end: { kind: 'Failed' as const, status: undefined, error: lost },
      })),
    );
    const failed = await waitForClaim(api.ports, 'ns', 'c-1', 300, claim('10')).catch((e: unknown) => e);
    expect(failed).toMatchObject({ reason: 'Deadline', seen: 'no conditions yet', cause: lost });
    // Pauses of 0, 100 and 200 ms: three or four watches in 300 ms, not a busy loop.
    expect(api.opened.length).toBeGreaterThanOrEqual(3);
    expect(api.opened.length).toBeLessThanOrEqual(4);
  });

  it('a refused watch fails at once with the HTTP status, step Watch', async () => {
    const forbidden = new Error('sandboxclaims is forbidden: cannot watch');
    const api = scripted([], [{ end: { kind: 'Failed', status: 403, error: forbidden } }]);
    const failed = await waitForClaim(api.ports, 'ns', 'c-1', 5_000, claim('10')).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(KubeRequestError);
    expect(failed).toMatchObject({
      step: 'Watch',
      target: 'sandboxclaim ns/c-1',
      status: 403,
      cause: forbidden,
    });
  });

  it('a claim deleted while watched, or gone at the read, fails at once', async () => {
    const deleted = scripted([], [{ events: [['DELETED', claim('11', binding)]], end: 'hang' }]);
    await expect(waitForClaim(deleted.ports, 'ns', 'c-1', 5_000, claim('10'))).rejects.toMatchObject({
      reason: 'Gone',
    });
    const deleting = scripted(
      [],
      [{ events: [['MODIFIED', { ...claim('11'), metadata: { deletionTimestamp: 'now' } }]], end: 'hang' }],
    );
    await expect(waitForClaim(deleting.ports, 'ns', 'c-1', 5_000, claim('10'))).rejects.toMatchObject({
      reason: 'Deleting',
    });
    const gone = scripted([{ fail: 404 }], []);
    await expect(waitForClaim(gone.ports, 'ns', 'c-1', 5_000)).rejects.toMatchObject({ reason: 'Gone' });
    expect(gone.opened).toEqual([]);
  });
});
