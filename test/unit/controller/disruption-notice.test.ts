import { describe, expect, it } from 'vitest';
import { noticeKey } from '../../../operator/api/session-reference.ts';
import type { DrainPlan, PodDrain } from '../../../operator/controller/disruption.ts';
import {
  noticeWrite,
  wantedNotice,
  type WantedNotice,
} from '../../../operator/controller/disruption-notice.ts';

const since = new Date('2026-12-03T07:00:00.250Z');
const drain = (node: string, pod: string): PodDrain => ({ node, cause: 'Cordoned', pod, uid: `u-${pod}` });
const holding: DrainPlan = {
  kind: 'Holding',
  drains: [drain('n2', 'sbx-1'), drain('n1', 'sbx-0'), drain('n2', 'sbx-2')],
  since,
  until: new Date('2026-12-03T07:05:00Z'),
  runningTurns: 1,
};
const moving: DrainPlan = { kind: 'Moving', drains: [drain('n1', 'sbx-0')], since, because: 'NoTurnRunning' };
const wanted = (plan: DrainPlan, over: { suspended?: boolean; replacementWaiting?: boolean } = {}) =>
  wantedNotice({ plan, holdSeconds: 300, suspended: false, replacementWaiting: false, ...over });

describe('wantedNotice', () => {
  it('names each drained node once, in order, since when in whole seconds, and the latest the pods move', () => {
    expect(wanted(holding)).toEqual({
      kind: 'Notice',
      notice: { nodes: ['n1', 'n2'], since: '2026-12-03T07:00:00Z', movesBy: '2026-12-03T07:05:00Z' },
    });
    expect(wanted(moving)).toEqual({
      kind: 'Notice',
      notice: { nodes: ['n1'], since: '2026-12-03T07:00:00Z', movesBy: '2026-12-03T07:05:00Z' },
    });
  });

  it('is none without a Reschedule under way, and none for a suspended sandbox whatever the drain', () => {
    expect(wanted({ kind: 'None' })).toEqual({ kind: 'None' });
    expect(wanted({ kind: 'Blocked', drains: [drain('n1', 'sbx-0')] })).toEqual({ kind: 'None' });
    expect(wanted(holding, { suspended: true })).toEqual({ kind: 'None' });
    expect(wanted({ kind: 'None' }, { suspended: true, replacementWaiting: true })).toEqual({ kind: 'None' });
  });

  it('leaves the references as they are while a moved pod’s name is kept free', () => {
    expect(wanted({ kind: 'None' }, { replacementWaiting: true })).toEqual({ kind: 'Unchanged' });
    expect(wanted(moving, { replacementWaiting: true }).kind).toBe('Notice');
  });
});

describe('noticeWrite', () => {
  const notice = { nodes: ['n1'], since: '2026-12-03T07:00:00Z', movesBy: '2026-12-03T07:05:00Z' };
  const told: WantedNotice = { kind: 'Notice', notice };

  it('sets the notice on an Attached reference that does not carry it', () => {
    expect(noticeWrite(told, 'Attached', undefined)).toEqual(notice);
    expect(noticeWrite(told, 'Attached', noticeKey({ ...notice, nodes: ['n2'] }))).toEqual(notice);
    expect(noticeWrite(told, 'Attached', noticeKey({ ...notice, movesBy: notice.since }))).toEqual(notice);
  });

  it('writes nothing where the reference carries what is wanted', () => {
    expect(noticeWrite(told, 'Attached', noticeKey(notice))).toBeUndefined();
    expect(noticeWrite({ kind: 'None' }, 'Attached', undefined)).toBeUndefined();
    expect(noticeWrite(told, 'Detached', undefined)).toBeUndefined();
    expect(noticeWrite({ kind: 'Unchanged' }, 'Attached', undefined)).toBeUndefined();
    expect(noticeWrite({ kind: 'Unchanged' }, 'Detached', noticeKey(notice))).toBeUndefined();
  });

  it('removes a notice once none is wanted, and a tombstone’s always', () => {
    expect(noticeWrite({ kind: 'None' }, 'Attached', noticeKey(notice))).toBeNull();
    expect(noticeWrite(told, 'Detached', noticeKey(notice))).toBeNull();
  });
});

describe('noticeKey', () => {
  it('tells notices apart by each field, and none from any', () => {
    const notice = { nodes: ['n1'], since: 'a', movesBy: 'b' };
    expect(noticeKey(undefined)).toBeUndefined();
    expect(noticeKey(notice)).toBe(noticeKey({ ...notice }));
    expect(
      new Set(
        [notice, { ...notice, nodes: ['n2'] }, { ...notice, since: 'c' }, { ...notice, movesBy: 'c' }].map(
          noticeKey,
        ),
      ).size,
    ).toBe(4);
  });
});
