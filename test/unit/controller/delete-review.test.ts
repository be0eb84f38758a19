/**
 * The operator's delete review (controller/delete-review.ts, docs/adr/0011): a Sandbox's DELETE by the
 * operator's identity is admitted only when a consistent LIST finds no reference; anything uncertain refuses.
 */
import { describe, expect, it } from 'vitest';
import { parseSessionReference } from '../../../operator/api/parse.ts';
import { judgeSandboxDelete, sandboxDeleteReviewer } from '../../../operator/controller/delete-review.ts';
import type { AdmissionRequest } from '../../../operator/runtime/admission-review.ts';
import { sessionReference } from '../builders.ts';
import { silent } from './scripted-ports.ts';

const SANDBOX = { namespace: 'ns', name: 'sbx' };
const deleteOf = (overrides: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  uid: 'u-1',
  operation: 'DELETE',
  namespace: 'ns',
  name: 'sbx',
  resource: { group: 'sandbox.agents.dev', resource: 'sandboxes' },
  userInfo: { username: 'system:serviceaccount:sandbox-system:sandbox-operator' },
  ...overrides,
});

describe('the verdict on the operator deleting a sandbox', () => {
  it('admits it when nothing references the sandbox', () => {
    expect(judgeSandboxDelete(SANDBOX, [])).toEqual({ allowed: true });
  });

  it('refuses it as a conflict while any reference is listed, naming three and counting the rest', () => {
    expect(judgeSandboxDelete(SANDBOX, ['ref-a'])).toEqual({
      allowed: false,
      code: 409,
      reason: 'Conflict',
      message: expect.stringContaining('sandbox ns/sbx still has 1 SessionReference(s) (ref-a)'),
    });
    const five = judgeSandboxDelete(SANDBOX, ['a', 'b', 'c', 'd', 'e']);
    expect(five).toMatchObject({ allowed: false, message: expect.stringContaining('(a, b, c and 2 more)') });
  });
});

describe('the delete reviewer', () => {
  const listing = (items: unknown[]) => ({
    listLive: (namespace: string, sandbox: string) => {
      expect({ namespace, sandbox }).toEqual({ namespace: 'ns', sandbox: 'sbx' });
      return Promise.resolve(items.map(parseSessionReference));
    },
  });

  it('lists the sandbox’s references live and judges by them', async () => {
    const attached = sessionReference('board-main').of('sbx').raw();
    expect(await sandboxDeleteReviewer(listing([]), silent)(deleteOf())).toEqual({ allowed: true });
    expect(await sandboxDeleteReviewer(listing([attached]), silent)(deleteOf())).toMatchObject({
      allowed: false,
      code: 409,
      message: expect.stringContaining('(board-main)'),
    });
  });

  it('counts a reference it cannot read, by its name', async () => {
    const malformed = sessionReference('odd').of('sbx').malformed('state', 'Sideways').raw();
    expect(await sandboxDeleteReviewer(listing([malformed]), silent)(deleteOf())).toMatchObject({
      allowed: false,
      message: expect.stringContaining('(odd)'),
    });
  });

  it('refuses when the LIST fails: uncertainty never admits the delete', async () => {
    const failing = { listLive: () => Promise.reject(new Error('etcd timed out')) };
    expect(await sandboxDeleteReviewer(failing, silent)(deleteOf())).toEqual({
      allowed: false,
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'could not list the SessionReferences of sandbox ns/sbx: etcd timed out',
    });
  });

  it('refuses anything but one Sandbox’s DELETE, saying the registration is not the operator’s', async () => {
    const never = { listLive: () => Promise.reject(new Error('must not list')) };
    const review = sandboxDeleteReviewer(never, silent);
    for (const request of [
      deleteOf({ operation: 'UPDATE' }),
      deleteOf({ resource: { group: 'sandbox.agents.dev', resource: 'sessionreferences' } }),
      deleteOf({ resource: { group: 'other.example', resource: 'sandboxes' } }),
      deleteOf({ name: undefined }),
    ])
      expect(await review(request)).toMatchObject({
        allowed: false,
        code: 400,
        message: expect.stringContaining("is not the operator's"),
      });
  });
});
