import { describe, expect, it } from 'vitest';
import { aheadOfPeer, format, mark, ratio, series, table, type Outcome } from '../../bench/claims/figures.ts';

const times = (entries: readonly [string, number][]) => new Map(entries);

/** A subject's outcome whose every latency is `ms` and whose burst sustained `rate` per second. */
function outcome(ms: number, rate: number): Outcome {
  const s = { sent: 10, observed: 10, p50: ms, p99: ms * 3, wallMs: 10_000 / rate, perSecond: rate };
  return {
    ok: true,
    sequential: s,
    burst: s,
    poolFillMs: 5_000,
    cpuPerClaimMs: 2,
    apiserverCpuMs: 1_500,
    coldInBurst: 0,
  };
}

describe('series', () => {
  it('takes each latency against its own request, p50 and p99 by rank', () => {
    const sent = times(Array.from({ length: 100 }, (_, i) => [`c${i}`, 1_000 + i]));
    // c<i> takes i + 1 ms: 1..100 ms.
    const observed = times(Array.from({ length: 100 }, (_, i) => [`c${i}`, 1_000 + i + i + 1]));
    const s = series(sent, observed);
    expect(s).toMatchObject({ sent: 100, observed: 100, p50: 51, p99: 100 });
  });

  it('measures the rate from the first request sent to the last observation', () => {
    const sent = times([
      ['a', 0],
      ['b', 100],
      ['c', 200],
      ['d', 300],
    ]);
    const observed = times([
      ['a', 500],
      ['b', 1_000],
      ['c', 1_500],
      ['d', 2_000],
    ]);
    const s = series(sent, observed);
    expect(s.wallMs).toBe(2_000);
    expect(s.perSecond).toBe(2);
  });

  it('counts only what was observed, and has no figures when nothing was', () => {
    const sent = times([
      ['a', 0],
      ['b', 0],
    ]);
    expect(series(sent, times([['a', 40]]))).toMatchObject({ sent: 2, observed: 1, p50: 40, wallMs: 40 });
    const none = series(sent, times([]));
    expect(none.observed).toBe(0);
    expect(none.p50).toBeNaN();
    expect(none.perSecond).toBeNaN();
    expect(none.wallMs).toBeNaN();
  });

  it('ignores observations of names never sent', () => {
    const s = series(
      times([['a', 10]]),
      times([
        ['a', 30],
        ['stray', 5_000],
      ]),
    );
    expect(s).toMatchObject({ observed: 1, p50: 20, wallMs: 20 });
  });
});

describe('format, ratio and mark', () => {
  it('shows each unit, and a dash for no figure', () => {
    expect(format(4.25, 'ms')).toBe('4.3 ms');
    expect(format(42.4, 'ms')).toBe('42 ms');
    expect(format(999.4, 'ms')).toBe('999 ms');
    expect(format(29_233, 'ms')).toBe('29.23 s');
    expect(format(1_234, 's')).toBe('1.23 s');
    expect(format(87.25, '/s')).toBe('87.3/s');
    expect(format(3, 'n')).toBe('3');
    expect(format(null, 'ms')).toBe('—');
    expect(format(Number.NaN, 's')).toBe('—');
  });

  it('divides ours by the base, two decimals below 1, a dash without both', () => {
    expect(ratio(50, 100)).toBe('0.50x');
    expect(ratio(300, 100)).toBe('3.0x');
    expect(ratio(5, 100)).toBe('0.05x');
    expect(ratio(null, 100)).toBe('—');
    expect(ratio(50, null)).toBe('—');
    expect(ratio(50, 0)).toBe('—');
    expect(ratio(Number.NaN, 100)).toBe('—');
  });

  it('marks a goal met at its bound and not above it', () => {
    const goal = { bound: 100, label: 'p50 ≤ 100 ms' };
    expect(mark(100, goal)).toBe('met (p50 ≤ 100 ms)');
    expect(mark(100.5, goal)).toBe('NOT met (p50 ≤ 100 ms)');
    expect(mark(null, goal)).toBe('—');
    expect(mark(50, undefined)).toBe('—');
  });
});

describe('table', () => {
  it('prints each subject, ours against the peer and the raw baseline, and the goal marks', () => {
    const lines = table(1000, 50, { raw: outcome(2, 900), peer: outcome(200, 60), ours: outcome(50, 120) });
    expect(lines[0]).toContain('pool 1000, 50 one at a time');
    const p50 = lines.find((l) => l.startsWith('| 1 at a time: claim -> Ready, p50'));
    expect(p50).toBe(
      '| 1 at a time: claim -> Ready, p50 | 2.0 ms | 200 ms | 50 ms | 0.25x | 25.0x | met (p50 ≤ 100 ms) |',
    );
    const p99 = lines.find((l) => l.startsWith('| burst of 1000: claim -> Ready, p99'));
    expect(p99).toContain('| 150 ms |');
    expect(p99).toContain('met (p99 ≤ 500 ms)');
    const rate = lines.find((l) => l.startsWith('| burst of 1000: claims per second'));
    expect(rate).toBe('| burst of 1000: claims per second | 900.0/s | 60.0/s | 120.0/s | 2.0x | 0.13x | — |');
  });

  it('prints a subject without figures as its reason, once, and no ratios', () => {
    const ours: Outcome = {
      ok: false,
      failed: false,
      reason: 'not available: sandbox.agents.dev/v1alpha1 serves no sandboxclaims',
    };
    const lines = table(100, 5, { raw: outcome(2, 900), peer: outcome(200, 60), ours });
    const body = lines.slice(2);
    expect(body[0]).toContain('| not available: sandbox.agents.dev/v1alpha1 serves no sandboxclaims |');
    expect(lines.join('\n').match(/not available/g)).toHaveLength(1);
    for (const line of body) expect(line).toMatch(/\| — \| — \| — \|$/);
  });

  it('says NOT met when ours misses a bound', () => {
    const lines = table(10, 5, { raw: outcome(2, 900), peer: outcome(200, 60), ours: outcome(400, 20) });
    expect(lines.find((l) => l.includes('1 at a time: claim -> Ready, p50'))).toContain(
      'NOT met (p50 ≤ 100 ms)',
    );
    // p99 = 1,200 ms.
    expect(lines.find((l) => l.includes('1 at a time: claim -> Ready, p99'))).toContain(
      'NOT met (p99 ≤ 500 ms)',
    );
  });
});

describe('aheadOfPeer', () => {
  it('is ahead with lower latencies and a higher rate', () => {
    const lines = aheadOfPeer(10, { raw: outcome(2, 900), peer: outcome(200, 60), ours: outcome(50, 120) });
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(line).toMatch(/^ {2}met /);
    expect(lines.find((l) => l.includes('claims per second'))).toContain('120.0/s against 60.0/s');
  });

  it('is behind with higher latencies, or a lower rate', () => {
    const slower = aheadOfPeer(10, { raw: outcome(2, 900), peer: outcome(50, 60), ours: outcome(200, 30) });
    for (const line of slower) expect(line).toMatch(/^ {2}NOT /);
    const equal = aheadOfPeer(10, { raw: outcome(2, 900), peer: outcome(50, 60), ours: outcome(50, 60) });
    for (const line of equal) expect(line).toMatch(/^ {2}NOT /);
  });

  it('cannot judge without both figures', () => {
    const none: Outcome = { ok: false, failed: true, reason: 'failed: timed out' };
    expect(aheadOfPeer(10, { raw: outcome(2, 900), peer: none, ours: outcome(50, 60) })).toEqual([
      '  ? ahead of the peer: the peer has no figures',
    ]);
    expect(aheadOfPeer(10, { raw: outcome(2, 900), peer: outcome(50, 60), ours: none })).toEqual([
      '  ? ahead of the peer: ours has no figures',
    ]);
  });
});
