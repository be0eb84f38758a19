import { describe, expect, it } from 'vitest';
import {
  endTurnRequestSchema,
  invalidRequest,
  noticeQuerySchema,
  PID_MAX,
  protectedPidIn,
  registerShellRequestSchema,
} from '../../../operator/sidecar/contract/requests.ts';
import { guardTarget } from '../../../operator/sidecar/process/os/signaller.ts';

const registration = {
  session: 'child_1',
  turn: 't-1',
  shell: 'sh-1',
  pgid: 4242,
  leaderPid: 4242,
  leaderStartTime: 1234,
};

describe('registration requests', () => {
  it('accepts a well-formed registration, with an optional match literal', () => {
    expect(registerShellRequestSchema.safeParse(registration).success).toBe(true);
    expect(registerShellRequestSchema.safeParse({ ...registration, match: 'ready on :3000' }).success).toBe(
      true,
    );
  });

  it.each([
    ['0 (the caller’s own group)', 0],
    ['-1 (every process)', -1],
    ['1 (PID 1)', 1],
    ['a negative group', -4242],
    ['a numeric string', '4242'],
    ['a float', 42.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['beyond pid_max', PID_MAX + 1],
    ['2^31', 2 ** 31],
    ['null', null],
    ['an object', { pid: 4242 }],
  ])('refuses a pgid that is %s', (_what, pgid) => {
    const parsed = registerShellRequestSchema.safeParse({ ...registration, pgid, leaderPid: pgid });
    expect(parsed.success).toBe(false);
  });

  it('refuses unknown fields, missing fields and a leader that does not lead its group', () => {
    expect(registerShellRequestSchema.safeParse({ ...registration, signal: 'SIGKILL' }).success).toBe(false);
    expect(registerShellRequestSchema.safeParse({ ...registration, session: undefined }).success).toBe(false);
    const notLeader = registerShellRequestSchema.safeParse({ ...registration, leaderPid: 4243 });
    expect(notLeader.success).toBe(false);
    expect(!notLeader.success && invalidRequest(notLeader.error).issues).toEqual([
      { path: 'pgid', message: 'a shell leads its own process group: spawn it detached so that pid = pgid' },
    ]);
  });

  it('refuses ids that are not ids and match literals that are too long', () => {
    for (const bad of [
      { session: '' },
      { turn: 'a b' },
      { shell: '../x' },
      { match: '' },
      { match: 'x'.repeat(257) },
    ]) {
      expect(registerShellRequestSchema.safeParse({ ...registration, ...bad }).success).toBe(false);
    }
  });

  it('names a protected pid (the sidecar, its group, a host) in a registration', () => {
    expect(protectedPidIn(registerShellRequestSchema.parse(registration), new Set([1, 4242]))).toBe(4242);
    expect(protectedPidIn(registerShellRequestSchema.parse(registration), new Set([1]))).toBeUndefined();
  });
});

describe('turn-end requests', () => {
  const end = { session: 'child_1', turn: 't-1', phase: 'Completed', role: 'Subagent' };
  it('names a session and a turn, never a group', () => {
    expect(endTurnRequestSchema.safeParse(end).success).toBe(true);
    expect(endTurnRequestSchema.safeParse({ ...end, pgid: 4242 }).success).toBe(false);
  });

  it('refuses a running phase, an unknown role and an unknown origin', () => {
    expect(endTurnRequestSchema.safeParse({ ...end, phase: 'Running' }).success).toBe(false);
    expect(endTurnRequestSchema.safeParse({ ...end, role: 'Admin' }).success).toBe(false);
    expect(endTurnRequestSchema.safeParse({ ...end, origin: 'Whatever' }).success).toBe(false);
    expect(endTurnRequestSchema.safeParse({ ...end, origin: 'ShellNotice' }).success).toBe(true);
  });
});

describe('notice queries', () => {
  it('defaults to everything, without waiting', () => {
    expect(noticeQuerySchema.parse({})).toEqual({ after: 0, waitMs: 0 });
  });

  it('refuses negative, fractional, huge and unknown parameters', () => {
    for (const bad of [
      { after: '-1' },
      { after: '1.5' },
      { waitMs: '30001' },
      { after: '9'.repeat(20) },
      { foo: '1' },
    ]) {
      expect(noticeQuerySchema.safeParse(bad).success).toBe(false);
    }
  });
});

describe('signal guard', () => {
  it('refuses 0, -1, 1, negatives, non-integers, beyond pid_max and refused pids before kill(2)', () => {
    const refused = new Set([1, 77, 78]);
    for (const target of [0, -1, 1, -5, 2.5, Number.NaN, '12', PID_MAX + 1, 77, 78]) {
      expect(guardTarget(target, refused)).toBeTypeOf('string');
    }
    expect(guardTarget(4242, refused)).toBeUndefined();
  });
});
