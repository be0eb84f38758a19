/**
 * The claim-exec bench's table (issue 28 on the real node), kept pure so a unit test holds it: each subject's
 * figures (agent-sandbox's and ours, each against its own exec-alone baseline) and ours against the peer.
 */
import { format, ratio } from '../claims/figures.ts';
import { percentile } from '../report.ts';

/** One subject's latencies, each sorted (ms). */
export type ClaimExecFigures = {
  readonly claimToExec: readonly number[];
  /** As an agent host waits: ours, our client's `claim()` (it watches the claim); the peer's client watches its claim too. */
  readonly claimToReady: readonly number[];
  /** The claim's first `Ready=True` seen by a watch of the claims, for both. */
  readonly claimToReadyWatched: readonly number[];
  /** The same `kubectl exec` again into the same sandbox, now running: what exec alone costs here. */
  readonly execAlone: readonly number[];
  /** Claims bound to a sandbox made for them (the pool was empty). */
  readonly cold: number;
};

/** A subject's figures, or why it has none (printed in its column, as the claims bench does). */
export type ClaimExecOutcome =
  | { readonly ok: true; readonly figures: ClaimExecFigures }
  | { readonly ok: false; readonly failed: boolean; readonly reason: string };

type Row = {
  readonly label: string;
  readonly pick: (f: ClaimExecFigures) => number;
  /** Not a latency (a count or a ratio): no ours/peer. */
  readonly unit?: 'n' | 'x';
};

const p = (values: readonly number[], at: number) => percentile(values, at);

export const claimExecRows: readonly Row[] = [
  { label: 'baseline: kubectl exec into a running sandbox, p50', pick: (f) => p(f.execAlone, 50) },
  { label: 'claim -> Ready seen by a watch, p50', pick: (f) => p(f.claimToReadyWatched, 50) },
  {
    label: 'claim -> Ready as the client waits, p50',
    pick: (f) => p(f.claimToReady, 50),
  },
  { label: 'claim -> first command done, p50', pick: (f) => p(f.claimToExec, 50) },
  { label: 'claim -> first command done, p99', pick: (f) => p(f.claimToExec, 99) },
  {
    label: 'claim -> first command against exec alone, p50',
    pick: (f) => p(f.claimToExec, 50) / p(f.execAlone, 50),
    unit: 'x',
  },
  { label: 'claims bound Cold (pool empty)', pick: (f) => f.cold, unit: 'n' },
];

const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

function cell(value: number, unit: Row['unit']): string {
  if (unit === 'x') return Number.isNaN(value) ? '—' : `${value.toFixed(1)}x`;
  return format(value, unit ?? 'ms');
}

/** The table's lines: a subject without figures shows its reason in its first cell. */
export function claimExecTable(
  claims: number,
  subjects: { readonly peer: ClaimExecOutcome; readonly ours: ClaimExecOutcome },
): string[] {
  const header = [`real node, ${claims} claims one at a time`, 'agent-sandbox', 'ours', 'ours/peer'];
  const value = (o: ClaimExecOutcome, row: Row) => (o.ok ? row.pick(o.figures) : null);
  const shown = (o: ClaimExecOutcome, row: Row, first: boolean) =>
    o.ok ? cell(row.pick(o.figures), row.unit) : first ? o.reason : '—';
  return [
    line(header),
    line(header.map(() => '---')),
    ...claimExecRows.map((row, i) =>
      line([
        row.label,
        shown(subjects.peer, row, i === 0),
        shown(subjects.ours, row, i === 0),
        row.unit === undefined ? ratio(value(subjects.ours, row), value(subjects.peer, row)) : '—',
      ]),
    ),
  ];
}
