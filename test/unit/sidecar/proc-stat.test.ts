import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { identityKey, isLive, parseProcStat } from '../../../operator/sidecar/contract/proc-stat.ts';

// A real line from this kernel; fields after `comm`: state ppid pgrp session tty tpgid flags … starttime (22).
const line = (comm: string, state = 'S') =>
  `11236 (${comm}) ${state} 11230 11230 11230 0 -1 4194560 297 0 2 0 0 0 0 0 20 0 1 0 126490 5853184 199 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0`;

describe('parseProcStat', () => {
  it('reads pid, state, ppid, pgrp, session and the start time in ticks', () => {
    expect(parseProcStat(line('bash'))).toEqual({
      ok: true,
      stat: {
        pid: 11236,
        comm: 'bash',
        state: 'S',
        ppid: 11230,
        pgrp: 11230,
        session: 11230,
        startTime: 126490,
      },
    });
  });

  it('parses after the last ")" so a comm with spaces and parentheses cannot shift the fields', () => {
    const parsed = parseProcStat(line('we ird) (x'));
    expect(parsed.ok && parsed.stat).toMatchObject({ comm: 'we ird) (x', pgrp: 11230, startTime: 126490 });
  });

  it('keeps every field right for any comm the kernel allows (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 15 }).filter((s) => !s.includes('\n')),
        (comm) => {
          const parsed = parseProcStat(line(comm));
          expect(parsed.ok && parsed.stat).toMatchObject({
            comm,
            pgrp: 11230,
            session: 11230,
            startTime: 126490,
          });
        },
      ),
    );
  });

  it('refuses a truncated line with a reason instead of throwing', () => {
    expect(parseProcStat('11236 (bash) S 11230 11230')).toEqual({
      ok: false,
      reason: 'stat line is truncated or a numeric field is malformed',
    });
  });

  it('refuses garbage: no comm, a bad pid, a bad state', () => {
    expect(parseProcStat('').ok).toBe(false);
    expect(parseProcStat('x (bash) S 1 1 1').ok).toBe(false);
    expect(parseProcStat(line('bash', '7')).ok).toBe(false);
  });
});

describe('isLive', () => {
  it('counts zombies and dead tasks as gone, and stopped or sleeping ones as live', () => {
    expect(['Z', 'X', 'x'].map((state) => isLive({ state }))).toEqual([false, false, false]);
    expect(['R', 'S', 'D', 'T', 't'].map((state) => isLive({ state }))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it('names a process by pid and start time', () => {
    expect(identityKey({ pid: 42, startTime: 7 })).toBe('42:7');
  });
});
