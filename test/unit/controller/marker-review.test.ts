/**
 * The review of the operator's legacy markers (controller/marker-review.ts, docs/adr/0011): a status UPDATE of
 * the operator's identity that marks an adopted sandbox — after which the index alone decides — is admitted only
 * when a walk of the session ledger at admission completes. A sandbox born with the marker passes unwalked;
 * without a ledger, or on any outcome but Complete, the marker is refused.
 */
import { describe, expect, it } from 'vitest';
import type { ReconciliationOutcome } from '../../../operator/api/reconciliation-outcome.ts';
import {
  bornWithMarker,
  judgeMarker,
  legacyMarkerReviewer,
} from '../../../operator/controller/marker-review.ts';
import type { LegacyWalk } from '../../../operator/controller/ports.ts';
import type { AdmissionRequest } from '../../../operator/runtime/admission-review.ts';
import { sandbox } from '../builders.ts';
import { recordingLog } from '../recording-log.ts';
import { MISROUTED_STATUS_UPDATES, OPERATOR, statusUpdateRequest } from './status-update-requests.ts';

const STATS = { owners: 1, lookedUp: 1, skippedLegacy: 0, timedOut: 0, failed: 0, elapsedMs: 3 };
const COMPLETE: ReconciliationOutcome = { kind: 'Complete', stats: STATS };
const FOREIGN: ReconciliationOutcome = {
  kind: 'Foreign',
  evidence: 'Ledger',
  owner: 'workspace_5',
  reason: 'owner workspace_5 has a recorded allocation of kubernetes/sbx',
  stats: STATS,
};
const refusedFor = (found: string) => ({
  allowed: false,
  code: 409,
  reason: 'Conflict',
  message: `sandbox ns/sbx is adopted and the legacy walk at admission found ${found}; the operator records the marker only after a complete walk`,
});

const adopted = sandbox('sbx')
  .withSpec({ replicas: 1 })
  .adopted()
  .withReconciliation('Pending', false)
  .build();
const marked = sandbox('sbx')
  .withSpec({ replicas: 1 })
  .adopted()
  .withReconciliation('Complete', true)
  .build();
const born = sandbox('sbx').withSpec({ replicas: 1 }).withReconciliation('Complete', true).build();
const unstatused = (built: { status?: unknown }) => ({ ...built, status: undefined });

describe('a first status born with the marker', () => {
  it('is one with no reconciliation recorded before and no adopted-from annotation now', () => {
    expect(bornWithMarker({ oldObject: unstatused(born), object: born })).toBe(true);
    expect(bornWithMarker({ oldObject: undefined, object: born })).toBe(true);
    expect(bornWithMarker({ oldObject: { status: null }, object: born })).toBe(true);
  });

  it('is not one of an adopted sandbox, nor any later status: once recorded adopted, always adopted', () => {
    const annotated = sandbox('sbx').withSpec({ replicas: 1 }).adopted().build();
    expect(bornWithMarker({ oldObject: unstatused(annotated), object: marked })).toBe(false);
    // A replace dropped the annotation: the earlier status still says adopted.
    expect(bornWithMarker({ oldObject: adopted, object: born })).toBe(false);
  });
});

describe('the verdict on a marker, given the walk at admission', () => {
  it('admits only a complete walk, and names what any other found', () => {
    expect(judgeMarker('ns/sbx', COMPLETE)).toEqual({ allowed: true });
    expect(judgeMarker('ns/sbx', FOREIGN)).toEqual(
      refusedFor('Foreign: owner workspace_5 has a recorded allocation of kubernetes/sbx'),
    );
    const late = {
      kind: 'Incomplete',
      cause: 'Timeout',
      owner: undefined,
      reason: 'budget spent',
      stats: STATS,
    };
    expect(judgeMarker('ns/sbx', late as ReconciliationOutcome)).toEqual(
      refusedFor('Incomplete: budget spent'),
    );
    const lost = { kind: 'Unavailable', owner: 'agent_1', reason: 'history gone', stats: STATS } as const;
    expect(judgeMarker('ns/sbx', lost)).toEqual(refusedFor('Unavailable: history gone'));
  });
});

describe('the marker reviewer', () => {
  const statusUpdate = (object: unknown, oldObject: unknown, overrides: Partial<AdmissionRequest> = {}) =>
    statusUpdateRequest({ object, oldObject, ...overrides });
  /** A walk that answers `outcome` and records which sandbox it walked for. */
  const walking = (outcome: ReconciliationOutcome | Error) => {
    const walked: string[] = [];
    const walk: LegacyWalk = {
      run: (target) => {
        walked.push(`${target.metadata.namespace}/${target.metadata.name} ${target.spec.worktree ?? '-'}`);
        return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
      },
    };
    return { walk, walked };
  };

  it('walks the ledger for the adopted sandbox written, admits a complete walk, refuses another, and says so', async () => {
    const { log, entries } = recordingLog();
    const complete = walking(COMPLETE);
    expect(await legacyMarkerReviewer(complete.walk, log)(statusUpdate(marked, adopted))).toEqual({
      allowed: true,
    });
    expect(complete.walked).toEqual(['ns/sbx wt-1']);
    const foreign = walking(FOREIGN);
    expect(await legacyMarkerReviewer(foreign.walk, log)(statusUpdate(marked, adopted))).toEqual(
      refusedFor('Foreign: owner workspace_5 has a recorded allocation of kubernetes/sbx'),
    );
    expect(entries).toEqual([
      expect.objectContaining({
        sandbox: 'ns/sbx',
        user: OPERATOR,
        outcome: 'Complete',
        msg: 'marker review: the legacy walk at admission completed, the marker admitted',
      }),
      expect.objectContaining({
        outcome: 'Foreign',
        msg: 'marker review: the legacy walk at admission did not complete, the marker refused',
      }),
    ]);
  });

  it('walks for an adopted sandbox’s first status, and for one a replace stripped of its annotation', async () => {
    const foreign = walking(FOREIGN);
    const review = legacyMarkerReviewer(foreign.walk, recordingLog().log);
    const annotated = sandbox('sbx').withSpec({ replicas: 1 }).adopted().build();
    expect(await review(statusUpdate(marked, unstatused(annotated)))).toMatchObject({ allowed: false });
    expect(await review(statusUpdate(born, adopted))).toMatchObject({ allowed: false });
    expect(foreign.walked).toHaveLength(2);
  });

  it('admits without a walk a sandbox born with the marker, and a status that keeps a marker already set', async () => {
    const never = walking(new Error('never walked'));
    const review = legacyMarkerReviewer(never.walk, recordingLog().log);
    expect(await review(statusUpdate(born, unstatused(born)))).toEqual({ allowed: true });
    expect(await review(statusUpdate(marked, marked))).toEqual({ allowed: true });
    expect(never.walked).toEqual([]);
  });

  it('refuses every adopted marker when no session ledger is configured', async () => {
    expect(await legacyMarkerReviewer(undefined, recordingLog().log)(statusUpdate(marked, adopted))).toEqual({
      allowed: false,
      code: 409,
      reason: 'Conflict',
      message:
        'sandbox ns/sbx is adopted and no session ledger is configured (--ledger-url): the operator never records its marker',
    });
  });

  it('refuses a Sandbox it cannot read, unwalked', async () => {
    const never = walking(new Error('never walked'));
    const review = legacyMarkerReviewer(never.walk, recordingLog().log);
    const odd = { ...marked, spec: { ...marked.spec, worktree: 7 } };
    expect(await review(statusUpdate(odd, adopted))).toEqual({
      allowed: false,
      code: 409,
      reason: 'Conflict',
      message: expect.stringMatching(
        /^Sandbox ns\/sbx is malformed: spec\.worktree: .*: the operator marks only a Sandbox it can read$/,
      ) as unknown,
    });
    expect(never.walked).toEqual([]);
  });

  it('refuses with 503 when the walk throws: uncertainty never admits the marker', async () => {
    const { log, entries } = recordingLog();
    const failing = walking(new Error('ledger socket closed'));
    expect(await legacyMarkerReviewer(failing.walk, log)(statusUpdate(marked, adopted))).toEqual({
      allowed: false,
      code: 503,
      reason: 'ServiceUnavailable',
      message: "could not read the session ledger's owners of sandbox ns/sbx: ledger socket closed",
    });
    expect(entries).toEqual([
      expect.objectContaining({
        sandbox: 'ns/sbx',
        err: expect.objectContaining({ message: 'ledger socket closed' }) as unknown,
        msg: 'marker review: the legacy walk failed; refusing',
      }),
    ]);
  });

  it('walks for two markers at once and refuses a third as busy (503) until one ends, a failed one included', async () => {
    const ends: ((outcome: ReconciliationOutcome) => void)[] = [];
    let fail: (error: Error) => void = () => undefined;
    let started = 0;
    const held: LegacyWalk = {
      run: () => {
        started += 1;
        return started === 2
          ? new Promise((_, reject) => (fail = reject))
          : new Promise((resolve) => ends.push(resolve));
      },
    };
    const review = legacyMarkerReviewer(held, recordingLog().log);
    const first = review(statusUpdate(marked, adopted));
    const second = review(statusUpdate(marked, adopted));
    expect(await review(statusUpdate(marked, adopted))).toEqual({
      allowed: false,
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'the marker review is walking the session ledger for 2 sandboxes already; try again',
    });
    expect(started).toBe(2);
    fail(new Error('ledger gone'));
    expect(await second).toMatchObject({ allowed: false, code: 503 });
    const third = review(statusUpdate(marked, adopted));
    expect(started).toBe(3);
    for (const end of ends) end(COMPLETE);
    expect(await first).toEqual({ allowed: true });
    expect(await third).toEqual({ allowed: true });
    // Both ended: the next walks at once again.
    const fourth = review(statusUpdate(marked, adopted));
    expect(started).toBe(4);
    ends.at(-1)?.(COMPLETE);
    expect(await fourth).toEqual({ allowed: true });
  });

  it.each(MISROUTED_STATUS_UPDATES)(
    'refuses what its registration never sends: %s',
    async (_, overrides, sent) => {
      const never = walking(new Error('never walked'));
      const review = legacyMarkerReviewer(never.walk, recordingLog().log);
      expect(await review(statusUpdate(marked, adopted, overrides))).toEqual({
        allowed: false,
        code: 400,
        reason: 'BadRequest',
        message: `the operator's marker review judges only a status UPDATE of one Sandbox; it was sent ${sent}`,
      });
      expect(never.walked).toEqual([]);
    },
  );
});
