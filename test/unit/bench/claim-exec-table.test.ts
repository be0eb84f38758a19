import { describe, expect, it } from 'vitest';
import { claimExecTable, type ClaimExecOutcome } from '../../bench/real-node/claim-exec-table.ts';

/**
 * Ten claims: Ready in `ready` ms as the client waits (`watched` ms on a watch), the first command done `exec`
 * ms later, exec alone `exec` ms.
 */
function outcome(ready: number, exec: number, cold = 0, watched = ready): ClaimExecOutcome {
  const ten = (base: number) => Array.from({ length: 10 }, (_, i) => base + i);
  return {
    ok: true,
    figures: {
      claimToReady: ten(ready),
      claimToReadyWatched: ten(watched),
      claimToExec: ten(ready + exec),
      execAlone: ten(exec),
      cold,
    },
  };
}

const row = (lines: readonly string[], label: string) => lines.find((l) => l.startsWith(`| ${label}`));

describe('claimExecTable', () => {
  it('prints each subject against its own exec alone, and ours against the peer', () => {
    const lines = claimExecTable(10, { peer: outcome(200, 250, 1), ours: outcome(100, 250, 0, 60) });
    expect(lines[0]).toBe('| real node, 10 claims one at a time | agent-sandbox | ours | ours/peer |');
    expect(row(lines, 'baseline: kubectl exec')).toMatch(/\| 255 ms \| 255 ms \| 1\.0x \|$/);
    expect(row(lines, 'claim -> Ready seen by a watch, p50')).toMatch(/\| 205 ms \| 65 ms \| 0\.32x \|$/);
    expect(row(lines, 'claim -> Ready as the client waits, p50')).toMatch(
      /\| 205 ms \| 105 ms \| 0\.51x \|$/,
    );
    expect(row(lines, 'claim -> first command done, p50')).toMatch(/\| 455 ms \| 355 ms \| 0\.78x \|$/);
    // Ten values: p99 is the worst.
    expect(row(lines, 'claim -> first command done, p99')).toMatch(/\| 459 ms \| 359 ms \| 0\.78x \|$/);
    expect(row(lines, 'claim -> first command against exec alone')).toMatch(/\| 1\.8x \| 1\.4x \| — \|$/);
    expect(row(lines, 'claims bound Cold')).toMatch(/\| 1 \| 0 \| — \|$/);
  });

  it('prints a subject without figures as its reason, once, and no ratios', () => {
    const peer: ClaimExecOutcome = {
      ok: false,
      failed: false,
      reason: 'not available: agent-sandbox v0.5.6 could not be built: no go',
    };
    const lines = claimExecTable(10, { peer, ours: outcome(100, 250) });
    const body = lines.slice(2);
    expect(body[0]).toContain(
      '| not available: agent-sandbox v0.5.6 could not be built: no go | 255 ms | — |',
    );
    expect(lines.join('\n').match(/not available/g)).toHaveLength(1);
    for (const line of body.slice(1)) expect(line).toMatch(/^\| [^|]+ \| — \| [^|]+ \| — \|$/);
  });
});
