import { describe, expect, it } from 'vitest';
import { TURN_ORIGINS, type TurnOrigin } from '../../../operator/api/session-reference.ts';
import {
  decideCompletionReport,
  IS_HOST_NOTICE,
  type CompletionFacts,
} from '../../../operator/client/report-rule.ts';
import { decideTurnEnd, turnKey } from '../../../operator/sidecar/process/turns/turn-decision.ts';

/** A turn of an answered delegation whose host recorded its joins (none by default). */
const answeredTurn = (origin: TurnOrigin | undefined, joinedOrigins: TurnOrigin[] = []): CompletionFacts => ({
  childSession: 'child',
  delegation: 'Answered',
  turn: {
    id: 't2',
    ...(origin === undefined ? {} : { origin }),
    joinedOrigins,
  },
  latestTurn: { kind: 'Read', id: 't2' },
});

const HOST_NOTICES: TurnOrigin[] = [
  'ShellNotice',
  'WatchNotice',
  'BrowserNotice',
  'SubagentNotice',
  'WorktreeNotice',
];
const RESUMPTIONS: TurnOrigin[] = [
  'PersonMessage',
  'ParentMessage',
  'Automation',
  'RelaunchRecovery',
  'ScheduledResume',
  'Supervision',
  'Unknown',
];

describe('completion report (docs/sidecar.md)', () => {
  it('classifies every origin the API knows: the five host notices, and nothing else', () => {
    expect(TURN_ORIGINS.filter((o) => IS_HOST_NOTICE[o])).toEqual(HOST_NOTICES);
    expect(TURN_ORIGINS.filter((o) => !IS_HOST_NOTICE[o])).toEqual(RESUMPTIONS);
  });

  it.each(HOST_NOTICES)('reports nothing new for a %s turn of an answered delegation', (origin) => {
    expect(decideCompletionReport(answeredTurn(origin))).toEqual({ report: false, reason: 'HostNoticeTurn' });
  });

  it.each(RESUMPTIONS)('reports a %s turn of an answered delegation (a resumption)', (origin) => {
    expect(decideCompletionReport(answeredTurn(origin))).toEqual({
      report: true,
      reason: 'Resumption',
      key: 'resume:child:t2:answer',
    });
  });

  it('reports a turn whose origin could not be attributed (fails open, as Unknown)', () => {
    expect(decideCompletionReport(answeredTurn(undefined))).toMatchObject({
      report: true,
      reason: 'Resumption',
    });
  });

  it.each(HOST_NOTICES)('reports on a %s turn while the delegation is unanswered', (origin) => {
    expect(decideCompletionReport({ ...answeredTurn(origin), delegation: 'Unanswered' })).toMatchObject({
      report: true,
      reason: 'DelegationUnanswered',
    });
  });

  it('makes a host-notice turn report when a person’s or the parent’s message was steered into it', () => {
    expect(decideCompletionReport(answeredTurn('ShellNotice', ['ParentMessage']))).toMatchObject({
      report: true,
      reason: 'SteeredResumption',
    });
    expect(
      decideCompletionReport(answeredTurn('WatchNotice', ['SubagentNotice', 'PersonMessage'])),
    ).toMatchObject({ report: true, reason: 'SteeredResumption' });
  });

  it('keeps a host-notice turn silent when only host notices joined it', () => {
    expect(decideCompletionReport(answeredTurn('ShellNotice', ['WatchNotice', 'BrowserNotice']))).toEqual({
      report: false,
      reason: 'HostNoticeTurn',
    });
  });

  it('reports a host-notice turn whose host recorded no joins at all: silence would be the worse failure', () => {
    const { turn, ...rest } = answeredTurn('ShellNotice');
    const unrecorded: CompletionFacts = { ...rest, turn: { id: turn.id, origin: 'ShellNotice' } };
    expect(decideCompletionReport(unrecorded)).toMatchObject({
      report: true,
      reason: 'JoinUnrecorded',
    });
  });

  it('keeps one key per delegation and turn', () => {
    const facts = answeredTurn('ParentMessage');
    expect(decideCompletionReport({ ...facts, delegationId: 'op-1' })).toMatchObject({
      key: 'resume:op-1:t2:answer',
    });
    expect(decideCompletionReport({ ...facts, delegationId: 'op-2' })).toMatchObject({
      key: 'resume:op-2:t2:answer',
    });
  });

  it('reports when the projection is unreadable or a later turn superseded this one', () => {
    expect(
      decideCompletionReport({ ...answeredTurn('ShellNotice'), latestTurn: { kind: 'Unreadable' } }),
    ).toMatchObject({ reason: 'ProjectionUnreadable' });
    expect(
      decideCompletionReport({ ...answeredTurn('ShellNotice'), latestTurn: { kind: 'Read', id: 't3' } }),
    ).toMatchObject({ reason: 'TurnSuperseded' });
  });

  it('gives racing callers for one turn the same key, so the parent hears once per resumption', () => {
    const first = decideCompletionReport(answeredTurn('ParentMessage'));
    const steered = decideCompletionReport(answeredTurn('ShellNotice', ['ParentMessage']));
    const next = decideCompletionReport({
      ...answeredTurn('PersonMessage'),
      turn: { id: 't3', origin: 'PersonMessage' },
      latestTurn: { kind: 'Read', id: 't3' },
    });
    expect(first.report && steered.report && first.key === steered.key).toBe(true);
    expect(next.report && first.report && next.key !== first.key).toBe(true);
  });
});

describe('turn-end decision (docs/sidecar.md, "Turn ends")', () => {
  it('retires only a completed subagent turn', () => {
    expect(decideTurnEnd('Subagent', 'Completed')).toEqual({
      kind: 'Retire',
      reason: 'CompletedSubagentTurn',
    });
    expect(decideTurnEnd('Subagent', 'Failed')).toEqual({ kind: 'Keep', reason: 'TurnFailed' });
    expect(decideTurnEnd('Subagent', 'Interrupted')).toEqual({ kind: 'Keep', reason: 'TurnInterrupted' });
  });

  it.each(['Root', 'Board', 'Ticket'] as const)('never retires a %s session’s shells', (role) => {
    for (const phase of ['Completed', 'Failed', 'Interrupted'] as const) {
      expect(decideTurnEnd(role, phase)).toEqual({ kind: 'Keep', reason: 'NotSubagent' });
    }
  });

  it('keys each turn of each session apart, and one turn alike every time (fences, idempotency)', () => {
    expect(turnKey('s1', 't1')).toBe(turnKey('s1', 't1'));
    const keys = [turnKey('s1', 't1'), turnKey('s1', 't2'), turnKey('s2', 't1')];
    expect(new Set(keys).size).toBe(3);
  });
});
