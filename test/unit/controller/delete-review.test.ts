/**
 * The operator's delete review (controller/delete-review.ts, docs/adr/0011): a Sandbox's DELETE by the
 * operator's identity is admitted only when a consistent LIST finds no reference; anything uncertain refuses.
 */
import { describe, expect, it } from 'vitest';
import { parseSessionReference } from '../../../operator/api/parse.ts';
import { judgeSandboxDelete, sandboxDeleteReviewer } from '../../../operator/controller/delete-review.ts';
import type { AdmissionRequest } from '../../../operator/runtime/admission-review.ts';
import { sessionReference } from '../builders.ts';
import { recordingLog } from '../recording-log.ts';

const OPERATOR = 'system:serviceaccount:sandbox-system:sandbox-operator';
const SANDBOX = { namespace: 'ns', name: 'sbx' };
const deleteOf = (overrides: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  uid: 'u-1',
  operation: 'DELETE',
  namespace: 'ns',
  name: 'sbx',
  resource: { group: 'sandbox.agents.dev', resource: 'sandboxes' },
  userInfo: { username: OPERATOR },
  ...overrides,
});
const refusal = (count: number, named: string) => ({
  allowed: false,
  code: 409,
  reason: 'Conflict',
  message:
    `sandbox ns/sbx still has ${count} SessionReference(s) (${named}): the operator deletes a sandbox only ` +
    'while nothing references it; its cleanup looks again and lifts the fence',
});

describe('the verdict on the operator deleting a sandbox', () => {
  it('admits it when nothing references the sandbox', () => {
    expect(judgeSandboxDelete(SANDBOX, [])).toEqual({ allowed: true });
  });

  it('refuses it as a conflict while any reference is listed, naming three and counting the rest', () => {
    expect(judgeSandboxDelete(SANDBOX, ['ref-a'])).toEqual(refusal(1, 'ref-a'));
    expect(judgeSandboxDelete(SANDBOX, ['a', 'b', 'c'])).toEqual(refusal(3, 'a, b, c'));
    expect(judgeSandboxDelete(SANDBOX, ['a', 'b', 'c', 'd'])).toEqual(refusal(4, 'a, b, c and 1 more'));
  });
});

describe('the delete reviewer', () => {
  /** A sandbox with no claim label never asks about a claim. */
  const noClaim = { claimDeleting: () => Promise.reject(new Error('no claim label: never asked')) };
  const listing = (items: unknown[]) => ({
    listLive: (namespace: string, sandbox: string) => {
      expect({ namespace, sandbox }).toEqual({ namespace: 'ns', sandbox: 'sbx' });
      return Promise.resolve(items.map(parseSessionReference));
    },
  });

  it('lists the sandbox’s references live, judges by them, and says so', async () => {
    const { log, entries } = recordingLog();
    const attached = sessionReference('board-main').of('sbx').raw();
    expect(await sandboxDeleteReviewer(listing([]), noClaim, log)(deleteOf())).toEqual({ allowed: true });
    expect(await sandboxDeleteReviewer(listing([attached]), noClaim, log)(deleteOf())).toEqual(
      refusal(1, 'board-main'),
    );
    expect(entries).toEqual([
      expect.objectContaining({
        sandbox: 'ns/sbx',
        user: OPERATOR,
        references: 0,
        msg: 'delete review: sandbox unreferenced, its delete admitted',
      }),
      expect.objectContaining({
        sandbox: 'ns/sbx',
        user: OPERATOR,
        references: 1,
        msg: 'delete review: sandbox still referenced, its delete refused',
      }),
    ]);
  });

  it('counts a reference it cannot read, by its key', async () => {
    const malformed = sessionReference('odd').of('sbx').malformed('state', 'Sideways').raw();
    const { log } = recordingLog();
    expect(await sandboxDeleteReviewer(listing([malformed]), noClaim, log)(deleteOf())).toEqual(
      refusal(1, 'ns/odd'),
    );
  });

  it('refuses when the LIST fails, and says why: uncertainty never admits the delete', async () => {
    const { log, entries } = recordingLog();
    const failing = { listLive: () => Promise.reject(new Error('etcd timed out')) };
    expect(await sandboxDeleteReviewer(failing, noClaim, log)(deleteOf())).toEqual({
      allowed: false,
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'could not read the SessionReferences or sandbox claim of sandbox ns/sbx: etcd timed out',
    });
    expect(entries).toEqual([
      expect.objectContaining({
        sandbox: 'ns/sbx',
        err: expect.objectContaining({ message: 'etcd timed out' }),
        msg: 'delete review could not read the references or the claim; refusing',
      }),
    ]);
  });

  it('refuses anything but one Sandbox’s DELETE, saying the registration is not the operator’s', async () => {
    const never = { listLive: () => Promise.reject(new Error('must not list')) };
    const review = sandboxDeleteReviewer(never, noClaim, recordingLog().log);
    const cases: [Partial<AdmissionRequest>, string][] = [
      [{ operation: 'UPDATE' }, 'UPDATE of sandboxes.sandbox.agents.dev'],
      [
        { resource: { group: 'sandbox.agents.dev', resource: 'sessionreferences' } },
        'DELETE of sessionreferences.sandbox.agents.dev',
      ],
      [{ resource: { group: 'other.example', resource: 'sandboxes' } }, 'DELETE of sandboxes.other.example'],
      [{ name: undefined }, 'DELETE of sandboxes.sandbox.agents.dev'],
      [{ namespace: undefined }, 'DELETE of sandboxes.sandbox.agents.dev'],
    ];
    for (const [overrides, sent] of cases)
      expect(await review(deleteOf(overrides))).toEqual({
        allowed: false,
        code: 400,
        reason: 'BadRequest',
        message:
          `the operator's delete review judges only the DELETE of one Sandbox; it was sent ${sent}: ` +
          "its ValidatingWebhookConfiguration is not the operator's",
      });
  });
  const claimed = (claim: string) =>
    deleteOf({ oldObject: { metadata: { labels: { 'sandbox.agents.dev/sandbox-claim': claim } } } });
  const claims = (deleting: readonly string[]) => {
    const asked: string[] = [];
    return {
      asked,
      claimDeleting: (namespace: string, claim: string) => {
        asked.push(`${namespace}/${claim}`);
        return Promise.resolve(deleting.includes(claim));
      },
    };
  };

  it('admits a deleted sandbox claim’s release of its sandbox without listing: the decision keeps it for others', async () => {
    const { log, entries } = recordingLog();
    const never = { listLive: () => Promise.reject(new Error('must not list')) };
    const deleting = claims(['claim-a']);
    expect(await sandboxDeleteReviewer(never, deleting, log)(claimed('claim-a'))).toEqual({ allowed: true });
    expect(deleting.asked).toEqual(['ns/claim-a']);
    expect(entries).toEqual([
      expect.objectContaining({
        sandbox: 'ns/sbx',
        claim: 'claim-a',
        msg: 'delete review: its sandbox claim is being deleted, its release’s delete admitted',
      }),
    ]);
  });

  it('judges a claim’s sandbox by its references while the claim lives: a leaked token cannot take it from its session', async () => {
    const attached = sessionReference('claim-a-ref').of('sbx').raw();
    const living = claims([]);
    const review = sandboxDeleteReviewer(listing([attached]), living, recordingLog().log);
    expect(await review(claimed('claim-a'))).toEqual(refusal(1, 'claim-a-ref'));
    expect(living.asked).toEqual(['ns/claim-a']);
    expect(await sandboxDeleteReviewer(listing([]), living, recordingLog().log)(claimed('claim-a'))).toEqual({
      allowed: true,
    });
  });

  it('refuses when the claim cannot be read', async () => {
    const failing = { claimDeleting: () => Promise.reject(new Error('claims unreachable')) };
    const review = sandboxDeleteReviewer(listing([]), failing, recordingLog().log);
    expect(await review(claimed('claim-a'))).toMatchObject({ allowed: false, code: 503 });
  });
});
