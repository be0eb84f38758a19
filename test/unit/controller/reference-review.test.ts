/**
 * The operator's reference review (controller/reference-review.ts, docs/adr/0011): a SessionReference's DELETE by
 * the operator's identity is admitted on the operator's own paths only — never for a reference foreign to a
 * sandbox that still stands, which would make a shared sandbox look exclusive. Anything uncertain refuses.
 */
import { describe, expect, it } from 'vitest';
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import type { LiveSandbox } from '../../../operator/controller/ports.ts';
import {
  claimLabelOf,
  judgeReferenceDelete,
  referenceDeleteReviewer,
  reviewedReference,
  type ReviewReads,
  type ReviewedReference,
} from '../../../operator/controller/reference-review.ts';
import type { AdmissionRequest } from '../../../operator/runtime/admission-review.ts';
import { sessionReference } from '../builders.ts';
import { recordingLog } from '../recording-log.ts';

const OPERATOR = 'system:serviceaccount:sandbox-system:sandbox-operator';
const CLAIM_LABEL = 'sandbox.agents.dev/sandbox-claim';
const standing: LiveSandbox = {
  uid: 'u-sbx',
  deleting: false,
  finalizers: [EXCLUSIVITY_FINALIZER],
  worktree: 'wt-1',
  statusWritten: true,
};
const reference = (overrides: Partial<ReviewedReference> = {}): ReviewedReference => ({
  namespace: 'ns',
  name: 'board-main',
  sandbox: 'sbx',
  worktree: 'wt-2',
  readable: true,
  claim: undefined,
  ...overrides,
});
const deleteOf = (oldObject: unknown, overrides: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  uid: 'u-1',
  operation: 'DELETE',
  namespace: 'ns',
  name: 'board-main',
  resource: { group: 'sandbox.agents.dev', resource: 'sessionreferences' },
  userInfo: { username: OPERATOR },
  oldObject,
  ...overrides,
});
const judge = (ref: ReviewedReference, sandbox: LiveSandbox | undefined, claimDeleting = false) =>
  judgeReferenceDelete({ reference: ref, sandbox, claimDeleting });

describe('the verdict on the operator deleting a reference', () => {
  it('refuses a foreign reference of a standing sandbox as a conflict, naming both worktrees', () => {
    expect(judge(reference(), standing)).toEqual({
      allowed: false,
      code: 409,
      reason: 'Conflict',
      message:
        "sessionreference ns/board-main is foreign to sandbox ns/sbx (worktree wt-2; the sandbox's wt-1), which " +
        'still stands: the operator deletes a reference of a standing sandbox only when it is its own ' +
        "worktree's and the sandbox is being deleted, on an administrator's sandbox.agents.dev/erase-references not yet acted on, " +
        'or as a sandbox claim’s own when the claim is deleted or its sandbox is not the claim’s or is being deleted',
    });
    // Being deleted, and still ours to decide: its references are what the decision reads.
    expect(judge(reference(), { ...standing, deleting: true })).toMatchObject({ allowed: false, code: 409 });
    // No worktree on either side is foreign too, as the decision counts it.
    expect(
      judge(reference({ worktree: undefined }), {
        uid: 'u-sbx',
        deleting: false,
        finalizers: [EXCLUSIVITY_FINALIZER],
        statusWritten: true,
      }),
    ).toMatchObject({
      allowed: false,
    });
  });

  it('names “none” for a worktree either side lacks', () => {
    const bare: LiveSandbox = {
      uid: 'u-sbx',
      deleting: false,
      finalizers: [EXCLUSIVITY_FINALIZER],
      statusWritten: true,
    };
    expect(judge(reference({ worktree: undefined }), bare)).toMatchObject({
      message: expect.stringMatching(
        /^sessionreference ns\/board-main is foreign to sandbox ns\/sbx \(worktree none; the sandbox's none\), which still stands/,
      ) as unknown,
    });
  });

  it('admits its own worktree’s reference while the sandbox is being deleted (the prune, the erase of an Exclusive index)', () => {
    expect(judge(reference({ worktree: 'wt-1' }), { ...standing, deleting: true })).toEqual({
      allowed: true,
    });
    // Not before: an own reference decides no verdict, but it keeps a DeleteWhenUnreferenced sandbox from its cleanup.
    expect(judge(reference({ worktree: 'wt-1' }), standing)).toEqual({
      allowed: false,
      code: 409,
      reason: 'Conflict',
      message: expect.stringMatching(
        /^sessionreference ns\/board-main is of sandbox ns\/sbx's own worktree \(wt-1\), which is not being deleted: /,
      ) as unknown,
    });
  });

  it('counts an unreadable reference as foreign, whatever worktree it names', () => {
    expect(judge(reference({ worktree: 'wt-1', readable: false }), standing)).toMatchObject({
      allowed: false,
      message: expect.stringContaining('(worktree wt-1, unreadable;') as unknown,
    });
  });

  it('admits any reference once its sandbox is gone, or deleting without the operator’s finalizer', () => {
    expect(judge(reference(), undefined)).toEqual({ allowed: true });
    expect(judge(reference(), { ...standing, deleting: true, finalizers: ['foregroundDeletion'] })).toEqual({
      allowed: true,
    });
    // Not deleting, without the finalizer (not yet put back): it still decides.
    expect(judge(reference(), { ...standing, finalizers: [] })).toMatchObject({ allowed: false });
  });

  it('admits any reference of a sandbox while an administrator’s erase request is not yet acted on', () => {
    expect(judge(reference(), { ...standing, eraseRequest: 'INC-7' })).toEqual({ allowed: true });
    expect(judge(reference(), { ...standing, eraseRequest: 'INC-7', erasedFor: 'INC-6' })).toEqual({
      allowed: true,
    });
  });

  it('refuses once the status records the erase as acted on, and for an erase inherited before any status', () => {
    // The annotation stays after the erase: it must not admit the deletes of references attached since.
    expect(judge(reference(), { ...standing, eraseRequest: 'INC-7', erasedFor: 'INC-7' })).toMatchObject({
      allowed: false,
      code: 409,
    });
    // A restore or a GitOps re-create brings the annotation back before the operator wrote any status: the
    // operator records it as done, erasing nothing (lifecycle.inheritedErase), so the review admits nothing.
    expect(judge(reference(), { ...standing, eraseRequest: 'INC-7', statusWritten: false })).toMatchObject({
      allowed: false,
      code: 409,
    });
  });

  it('admits a claim’s reference on the claim’s release or the binding’s withdraw, never from its bound standing sandbox', () => {
    const claimRef = reference({ claim: 'claim-a' });
    const bound = { ...standing, claim: 'claim-a' };
    expect(judge(claimRef, bound, true)).toEqual({ allowed: true });
    expect(judge(claimRef, { ...bound, deleting: true })).toEqual({ allowed: true });
    expect(judge(claimRef, { ...standing, claim: 'claim-b' })).toEqual({ allowed: true });
    expect(judge(claimRef, standing)).toEqual({ allowed: true });
    expect(judge(claimRef, bound)).toMatchObject({ allowed: false, code: 409 });
    // A claim being deleted frees only its own reference.
    expect(judge(reference(), bound, true)).toMatchObject({ allowed: false });
  });
});

describe('the reference the request names', () => {
  it('is read from oldObject: its sandbox, worktree and claim label', () => {
    const raw = sessionReference('board-main').of('sbx').fromWorktree('wt-2').raw();
    const labelled = {
      ...raw,
      metadata: { name: 'board-main', namespace: 'ns', labels: { [CLAIM_LABEL]: 'c' } },
    };
    expect(reviewedReference(deleteOf(raw))).toEqual(reference());
    expect(reviewedReference(deleteOf(labelled))).toEqual(reference({ claim: 'c' }));
  });

  it('reads a claim label only when it is a non-empty string', () => {
    expect(claimLabelOf(undefined)).toBeUndefined();
    expect(claimLabelOf({})).toBeUndefined();
    expect(claimLabelOf({ metadata: {} })).toBeUndefined();
    expect(claimLabelOf({ metadata: { labels: {} } })).toBeUndefined();
    expect(claimLabelOf({ metadata: { labels: { [CLAIM_LABEL]: '' } } })).toBeUndefined();
    expect(claimLabelOf({ metadata: { labels: { [CLAIM_LABEL]: 7 } } })).toBeUndefined();
    expect(claimLabelOf({ metadata: { labels: { [CLAIM_LABEL]: 'c' } } })).toBe('c');
  });

  it('needs its namespace, name and a non-empty sandbox', () => {
    const raw = sessionReference('board-main').of('sbx').fromWorktree('wt-2').raw();
    expect(reviewedReference({ ...deleteOf(raw), namespace: undefined })).toBeUndefined();
    expect(reviewedReference({ ...deleteOf(raw), name: undefined })).toBeUndefined();
    expect(reviewedReference(deleteOf({ spec: { sandbox: '' } }))).toBeUndefined();
    expect(reviewedReference(deleteOf({}))).toBeUndefined();
    // Unreadable, and only its sandbox and worktree given: judged as foreign, its worktree named.
    expect(reviewedReference(deleteOf({ spec: { sandbox: 'sbx', worktree: 'wt-9' } }))).toEqual(
      reference({ worktree: 'wt-9', readable: false }),
    );
    expect(reviewedReference(deleteOf({ spec: { sandbox: 'sbx', worktree: '' } }))).toEqual(
      reference({ worktree: undefined, readable: false }),
    );
  });

  it('is unreadable but still judged when only its sandbox can be read; not at all without one', () => {
    const broken = sessionReference('board-main')
      .of('sbx')
      .fromWorktree('wt-1')
      .malformed('state', 'Sideways')
      .raw();
    expect(reviewedReference(deleteOf(broken))).toEqual(reference({ worktree: 'wt-1', readable: false }));
    expect(reviewedReference(deleteOf({ spec: { sandbox: 7 } }))).toBeUndefined();
    expect(reviewedReference(deleteOf(undefined))).toBeUndefined();
  });
});

describe('the reference reviewer', () => {
  const foreignRef = sessionReference('board-main').of('sbx').fromWorktree('wt-2').raw();
  const reads = (sandbox: LiveSandbox | undefined): ReviewReads & { read: string[] } => {
    const read: string[] = [];
    return {
      read,
      sandboxes: {
        readLive: (namespace, name) => {
          read.push(`${namespace}/${name}`);
          return Promise.resolve(sandbox);
        },
      },
      claimDeleting: () => Promise.reject(new Error('no claim label: never asked')),
    };
  };

  it('reads the sandbox live, judges, and says what it decided', async () => {
    const { log, entries } = recordingLog();
    const live = reads(standing);
    expect(await referenceDeleteReviewer(live, log)(deleteOf(foreignRef))).toMatchObject({
      allowed: false,
      code: 409,
    });
    expect(await referenceDeleteReviewer(reads(undefined), log)(deleteOf(foreignRef))).toEqual({
      allowed: true,
    });
    expect(live.read).toEqual(['ns/sbx']);
    expect(entries).toEqual([
      expect.objectContaining({
        reference: 'ns/board-main',
        sandbox: 'sbx',
        user: OPERATOR,
        sandboxStands: true,
        msg: 'reference review: a standing sandbox’s foreign reference, its delete refused',
      }),
      expect.objectContaining({
        sandboxStands: false,
        msg: 'reference review: not a standing sandbox’s foreign reference, its delete admitted',
      }),
    ]);
  });

  it('refuses when a read fails, and says why: uncertainty never admits the delete', async () => {
    const { log, entries } = recordingLog();
    const failing: ReviewReads = {
      sandboxes: { readLive: () => Promise.reject(new Error('etcd timed out')) },
      claimDeleting: () => Promise.resolve(false),
    };
    expect(await referenceDeleteReviewer(failing, log)(deleteOf(foreignRef))).toEqual({
      allowed: false,
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'could not read what decides the delete of sessionreference ns/board-main: etcd timed out',
    });
    expect(entries).toEqual([
      expect.objectContaining({
        reference: 'ns/board-main',
        err: expect.objectContaining({ message: 'etcd timed out' }) as unknown,
        msg: 'reference review could not read its sandbox or claim; refusing',
      }),
    ]);
  });

  it('asks about the claim its label names', async () => {
    const asked: string[] = [];
    const labelled = {
      ...foreignRef,
      metadata: { name: 'board-main', namespace: 'ns', labels: { [CLAIM_LABEL]: 'c' } },
    };
    const withClaim: ReviewReads = {
      sandboxes: { readLive: () => Promise.resolve({ ...standing, claim: 'c' }) },
      claimDeleting: (namespace, claim) => {
        asked.push(`${namespace}/${claim}`);
        return Promise.resolve(true);
      },
    };
    expect(await referenceDeleteReviewer(withClaim, recordingLog().log)(deleteOf(labelled))).toEqual({
      allowed: true,
    });
    expect(asked).toEqual(['ns/c']);
  });

  it('refuses anything but one SessionReference’s DELETE naming its sandbox', async () => {
    const review = referenceDeleteReviewer(reads(undefined), recordingLog().log);
    const cases: [AdmissionRequest, string][] = [
      [deleteOf(foreignRef, { operation: 'UPDATE' }), 'UPDATE of sessionreferences.sandbox.agents.dev'],
      [
        deleteOf(foreignRef, { resource: { group: 'sandbox.agents.dev', resource: 'sandboxes' } }),
        'DELETE of sandboxes.sandbox.agents.dev',
      ],
      [deleteOf({ spec: {} }), 'DELETE of sessionreferences.sandbox.agents.dev'],
      [
        deleteOf(foreignRef, { resource: { group: 'other.example', resource: 'sessionreferences' } }),
        'DELETE of sessionreferences.other.example',
      ],
      [deleteOf(foreignRef, { name: undefined }), 'DELETE of sessionreferences.sandbox.agents.dev'],
    ];
    for (const [request, sent] of cases)
      expect(await review(request)).toEqual({
        allowed: false,
        code: 400,
        reason: 'BadRequest',
        message:
          "the operator's reference review judges only the DELETE of one SessionReference naming its sandbox; " +
          `it was sent ${sent}`,
      });
  });
});
