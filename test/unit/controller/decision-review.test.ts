/**
 * The review of the operator's Exclusive records (controller/decision-review.ts, docs/adr/0011): a status UPDATE
 * of the operator's identity that turns a Sandbox's verdict Exclusive — which the deletion takes as final — is
 * admitted only while a consistent LIST finds no reference foreign to its worktree. Anything uncertain refuses.
 */
import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS } from '../../../operator/api/limits.ts';
import { parseSessionReference } from '../../../operator/api/parse.ts';
import {
  exclusiveRecordReviewer,
  judgeExclusiveRecord,
} from '../../../operator/controller/decision-review.ts';
import type { AdmissionRequest } from '../../../operator/runtime/admission-review.ts';
import { sandbox, sessionReference } from '../builders.ts';
import { recordingLog } from '../recording-log.ts';
import { MISROUTED_STATUS_UPDATES, OPERATOR, statusUpdateRequest } from './status-update-requests.ts';

const SANDBOX = { namespace: 'ns', name: 'sbx', worktree: 'wt-1' };
const listed = (...raws: Record<string, unknown>[]) => raws.map(parseSessionReference);
const own = (name: string) => sessionReference(name).of('sbx').fromWorktree('wt-1').raw();
const foreign = (name: string) => sessionReference(name).of('sbx').fromWorktree('wt-2').raw();
const refused = (why: string) => ({
  allowed: false,
  code: 409,
  reason: 'Conflict',
  message: `sandbox ns/sbx has ${why}: the operator records an Exclusive decision only when no other session uses the sandbox; it decides again`,
});

describe('the verdict on recording a sandbox as Exclusive', () => {
  it('admits it when every listed reference is of the sandbox’s own worktree, or none is listed', () => {
    expect(judgeExclusiveRecord(SANDBOX, [], INDEX_LIMITS)).toEqual({ allowed: true });
    expect(judgeExclusiveRecord(SANDBOX, listed(own('a'), own('b')), INDEX_LIMITS)).toEqual({
      allowed: true,
    });
  });

  it('refuses it while a foreign reference, attached or a tombstone, is listed, naming three and counting the rest', () => {
    const tombstone = sessionReference('t').of('sbx').fromWorktree('wt-2').detached().raw();
    expect(judgeExclusiveRecord(SANDBOX, listed(own('a'), tombstone), INDEX_LIMITS)).toEqual(
      refused('1 SessionReference(s) foreign to its worktree wt-1 or unreadable (t)'),
    );
    const three = listed(foreign('f1'), foreign('f2'), foreign('f3'));
    expect(judgeExclusiveRecord(SANDBOX, three, INDEX_LIMITS)).toEqual(
      refused('3 SessionReference(s) foreign to its worktree wt-1 or unreadable (f1, f2, f3)'),
    );
    const four = listed(foreign('f1'), foreign('f2'), foreign('f3'), foreign('f4'));
    expect(judgeExclusiveRecord(SANDBOX, four, INDEX_LIMITS)).toEqual(
      refused('4 SessionReference(s) foreign to its worktree wt-1 or unreadable (f1, f2, f3 and 1 more)'),
    );
  });

  it('counts a reference with no worktree, and every reference of a sandbox with none, as foreign', () => {
    const bare = sessionReference('bare').of('sbx').fromWorktree(undefined).raw();
    expect(judgeExclusiveRecord(SANDBOX, listed(bare), INDEX_LIMITS)).toMatchObject({ allowed: false });
    expect(
      judgeExclusiveRecord({ ...SANDBOX, worktree: undefined }, listed(own('a')), INDEX_LIMITS),
    ).toMatchObject({ allowed: false, message: expect.stringContaining('its worktree none') as unknown });
  });

  it('refuses it for an unreadable reference, named by its key', () => {
    const odd = sessionReference('odd').of('sbx').malformed('state', 'Sideways').raw();
    expect(judgeExclusiveRecord(SANDBOX, listed(own('a'), odd), INDEX_LIMITS)).toEqual(
      refused('1 SessionReference(s) foreign to its worktree wt-1 or unreadable (ns/odd)'),
    );
  });

  it('refuses it when the listed index is over its limits, own references alone', () => {
    const limits = { ...INDEX_LIMITS, maxReferences: 1 };
    expect(judgeExclusiveRecord(SANDBOX, listed(own('a'), own('b')), limits)).toEqual(
      refused('its reference index is over its limits (References: 2 > 1)'),
    );
  });
});

describe('the decision reviewer', () => {
  const statusUpdate = (object: unknown, overrides: Partial<AdmissionRequest> = {}) =>
    statusUpdateRequest({ object, ...overrides });
  const listing = (...raws: Record<string, unknown>[]) => ({
    listLive: (namespace: string, name: string) => {
      expect({ namespace, name }).toEqual({ namespace: 'ns', name: 'sbx' });
      return Promise.resolve(listed(...raws));
    },
  });
  const stored = sandbox('sbx').withSpec({ replicas: 1 }).build();

  it('lists the sandbox’s references live, judges by the worktree of the object written, and says so', async () => {
    const { log, entries } = recordingLog();
    expect(await exclusiveRecordReviewer(listing(own('a')), INDEX_LIMITS, log)(statusUpdate(stored))).toEqual(
      {
        allowed: true,
      },
    );
    const refusal = await exclusiveRecordReviewer(
      listing(foreign('board')),
      INDEX_LIMITS,
      log,
    )(statusUpdate(stored));
    expect(refusal).toEqual(
      refused('1 SessionReference(s) foreign to its worktree wt-1 or unreadable (board)'),
    );
    expect(entries).toEqual([
      expect.objectContaining({
        sandbox: 'ns/sbx',
        user: OPERATOR,
        references: 1,
        msg: 'decision review: no other session uses the sandbox, its Exclusive record admitted',
      }),
      expect.objectContaining({
        msg: 'decision review: another session uses the sandbox, its Exclusive record refused',
      }),
    ]);
  });

  it('refuses a Sandbox it cannot read', async () => {
    const review = exclusiveRecordReviewer(listing(own('a')), INDEX_LIMITS, recordingLog().log);
    expect(await review(statusUpdate({ ...stored, spec: { ...stored.spec, worktree: 7 } }))).toEqual({
      allowed: false,
      code: 409,
      reason: 'Conflict',
      message: expect.stringMatching(
        /^Sandbox ns\/sbx is malformed: spec\.worktree: .*: the operator records an Exclusive decision only of a Sandbox it can read$/,
      ) as unknown,
    });
  });

  it('refuses with 503 when the LIST fails: uncertainty never admits the record', async () => {
    const { log, entries } = recordingLog();
    const failing = { listLive: () => Promise.reject(new Error('etcd timeout')) };
    expect(await exclusiveRecordReviewer(failing, INDEX_LIMITS, log)(statusUpdate(stored))).toEqual({
      allowed: false,
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'could not read the SessionReferences of sandbox ns/sbx: etcd timeout',
    });
    expect(entries).toEqual([
      expect.objectContaining({
        sandbox: 'ns/sbx',
        err: expect.objectContaining({ message: 'etcd timeout' }) as unknown,
        msg: 'decision review could not list references; refusing',
      }),
    ]);
  });

  it.each(MISROUTED_STATUS_UPDATES)(
    'refuses what its registration never sends: %s',
    async (_, overrides, sent) => {
      const never = { listLive: () => Promise.reject(new Error('never listed')) };
      const review = exclusiveRecordReviewer(never, INDEX_LIMITS, recordingLog().log);
      expect(await review(statusUpdate(stored, overrides))).toEqual({
        allowed: false,
        code: 400,
        reason: 'BadRequest',
        message: `the operator's decision review judges only a status UPDATE of one Sandbox; it was sent ${sent}`,
      });
    },
  );
});
