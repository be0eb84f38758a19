import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS, type Sandbox } from '../../../operator/api/index.ts';
import { judgeSuspension, keepsAwake, suspendedMessage } from '../../../operator/controller/suspension.ts';
import { buildReferenceIndex, EMPTY_INDEX } from '../../../operator/exclusivity/index.ts';
import { attached, reference, tombstone } from '../fixtures.ts';
import { sandbox } from '../builders.ts';

const now = new Date('2026-11-30T12:00:00Z');
const idle = (seconds: number, status?: Sandbox['status']): Sandbox =>
  sandbox('sbx')
    .withSpec({ workspace: 'Ephemeral', idle: { suspendAfterSeconds: seconds } })
    .withStatus(status)
    .build();
const tombstonesOnly = buildReferenceIndex([tombstone('t', 'wt-1'), tombstone('u', undefined)], INDEX_LIMITS);
const oneAttached = buildReferenceIndex([tombstone('t', 'wt-1'), attached('a', 'wt-1')], INDEX_LIMITS);

describe('judgeSuspension', () => {
  it('runs a sandbox with no idle policy and no suspension asked, whatever its references', () => {
    const running = { kind: 'Running', idleSince: undefined, idleInMs: undefined };
    expect(judgeSuspension(sandbox('sbx').build(), EMPTY_INDEX, now)).toEqual(running);
    expect(judgeSuspension(sandbox('sbx').build(), tombstonesOnly, now)).toEqual(running);
  });

  it('suspends a sandbox whose spec asks it, attached or not, and stops its idle clock', () => {
    const asked = sandbox('sbx')
      .withSpec({ operatingMode: 'Suspended', workspace: 'Ephemeral', idle: { suspendAfterSeconds: 5 } })
      .withStatus({ idleSince: '2026-11-30T10:00:00Z' })
      .build();
    const suspended = { kind: 'Suspended', reason: 'Requested', idleSince: undefined };
    expect(judgeSuspension(asked, oneAttached, now)).toEqual(suspended);
    expect(judgeSuspension(asked, EMPTY_INDEX, now)).toEqual(suspended);
  });

  it('starts the idle clock now when no reference is attached (tombstones only, or none)', () => {
    for (const index of [EMPTY_INDEX, tombstonesOnly])
      expect(judgeSuspension(idle(60), index, now)).toEqual({
        kind: 'Running',
        idleSince: '2026-11-30T12:00:00Z',
        idleInMs: 60_000,
      });
  });

  it('counts from status.idleSince and suspends as Idle once suspendAfterSeconds have passed, not before', () => {
    const since = { idleSince: '2026-11-30T11:59:00Z' };
    expect(judgeSuspension(idle(61, since), tombstonesOnly, now)).toEqual({
      kind: 'Running',
      idleSince: since.idleSince,
      idleInMs: 1000,
    });
    expect(judgeSuspension(idle(60, since), tombstonesOnly, now)).toEqual({
      kind: 'Suspended',
      reason: 'Idle',
      idleSince: since.idleSince,
      afterSeconds: 60,
      byTurns: false,
    });
    expect(judgeSuspension(idle(59, since), EMPTY_INDEX, now)).toMatchObject({ kind: 'Suspended' });
  });

  it('resumes an idle sandbox as soon as a reference is attached, and forgets its idle clock', () => {
    const long = idle(5, { idleSince: '2026-11-30T10:00:00Z' });
    expect(judgeSuspension(long, oneAttached, now)).toEqual({
      kind: 'Running',
      idleSince: undefined,
      idleInMs: undefined,
    });
  });

  it('fails closed on an overflowed index: keeps the sandbox running, its clock stopped', () => {
    const overflowed = buildReferenceIndex([tombstone('t', 'wt-1')], INDEX_LIMITS, {
      limit: 'References',
      observed: 600,
      max: 512,
    });
    expect(judgeSuspension(idle(5, { idleSince: '2026-11-30T10:00:00Z' }), overflowed, now)).toEqual({
      kind: 'Running',
      idleSince: undefined,
      idleInMs: undefined,
    });
  });
});

describe('idle when no turn is running (spec.idle.whenNoTurnRunning)', () => {
  const turnIdle = (status?: Sandbox['status']): Sandbox =>
    sandbox('sbx')
      .withSpec({ workspace: 'Ephemeral', idle: { suspendAfterSeconds: 60, whenNoTurnRunning: true } })
      .withStatus(status)
      .build();
  const between = buildReferenceIndex([attached('a', 'wt-1'), attached('b', 'wt-2')], INDEX_LIMITS);
  const working = buildReferenceIndex(
    [attached('a', 'wt-1'), reference({ name: 'b', turnRunning: true })],
    INDEX_LIMITS,
  );
  const long = { idleSince: '2026-11-30T10:00:00Z' };

  it('counts an attached session only while its turn runs', () => {
    expect(judgeSuspension(turnIdle(long), between, now)).toEqual({
      kind: 'Suspended',
      reason: 'Idle',
      idleSince: long.idleSince,
      afterSeconds: 60,
      byTurns: true,
    });
    expect(judgeSuspension(turnIdle(long), working, now)).toEqual({
      kind: 'Running',
      idleSince: undefined,
      idleInMs: undefined,
    });
    // Without the option, being attached is enough.
    expect(judgeSuspension(idle(60, long), between, now).kind).toBe('Running');
  });

  it('keepsAwake: Attached, and with the option its turn Running; a tombstone never', () => {
    const on = { whenNoTurnRunning: true };
    expect(keepsAwake({ state: 'Attached' }, {})).toBe(true);
    expect(keepsAwake({ state: 'Attached' }, { whenNoTurnRunning: false })).toBe(true);
    expect(keepsAwake({ state: 'Attached' }, on)).toBe(false);
    expect(keepsAwake({ state: 'Attached', turnRunning: true }, on)).toBe(true);
    expect(keepsAwake({ state: 'Detached', turnRunning: true }, on)).toBe(false);
    expect(keepsAwake({ state: 'Detached', turnRunning: true }, {})).toBe(false);
  });
});

describe('suspendedMessage', () => {
  it('says why, how many pods still stop, and what resumes it', () => {
    const requested = { kind: 'Suspended', reason: 'Requested', idleSince: undefined } as const;
    expect(suspendedMessage(requested, 0)).toBe(
      'spec.operatingMode is Suspended; its pods are stopped; set it to Running to resume',
    );
    expect(suspendedMessage(requested, 2)).toBe(
      'spec.operatingMode is Suspended; 2 of its pods still stopping; set it to Running to resume',
    );
    const byIdleness = {
      kind: 'Suspended',
      reason: 'Idle',
      idleSince: '2026-11-30T11:00:00Z',
      afterSeconds: 30,
      byTurns: false,
    } as const;
    expect(suspendedMessage(byIdleness, 0)).toBe(
      'no SessionReference Attached since 2026-11-30T11:00:00Z (spec.idle.suspendAfterSeconds 30); ' +
        'its pods are stopped; an attach resumes it',
    );
    expect(suspendedMessage({ ...byIdleness, byTurns: true }, 1)).toBe(
      'no attached session with a turn Running since 2026-11-30T11:00:00Z (spec.idle.suspendAfterSeconds 30); ' +
        '1 of its pods still stopping; a turn that starts resumes it',
    );
  });
});
