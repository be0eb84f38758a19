/**
 * The claims bench's arithmetic and its table (issue 28), kept pure so a unit test holds it: latencies from
 * "sent" and "observed" times, the rate a burst sustained, the rows with each subject's figure, ours against
 * the peer and against the raw baseline, and the goal marks (p50 ≤ 100 ms, p99 ≤ 500 ms).
 */
import { percentile } from '../report.ts';

/** One series of latencies: each name's observed time against the time its request was sent (ms). */
export type Series = {
  readonly sent: number;
  /** How many of those sent were observed (the rest timed out). */
  readonly observed: number;
  readonly p50: number;
  readonly p99: number;
  /** First request sent to last observation. */
  readonly wallMs: number;
  /** Observations per second over the wall. */
  readonly perSecond: number;
};

export function series(sent: ReadonlyMap<string, number>, observed: ReadonlyMap<string, number>): Series {
  const latencies: number[] = [];
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const [name, at] of sent) {
    first = Math.min(first, at);
    const seen = observed.get(name);
    if (seen === undefined) continue;
    latencies.push(seen - at);
    last = Math.max(last, seen);
  }
  latencies.sort((a, b) => a - b);
  const wallMs = latencies.length === 0 ? Number.NaN : last - first;
  return {
    sent: sent.size,
    observed: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    wallMs,
    perSecond: latencies.length === 0 || wallMs <= 0 ? Number.NaN : latencies.length / (wallMs / 1000),
  };
}

/** What one subject measured, or why it has no figures (printed as the value, like a peer not built). */
export type Outcome =
  | {
      readonly ok: true;
      /** One claim at a time (the raw baseline: one label update at a time on one ready pod). */
      readonly sequential: Series;
      /** N at once against a pool of N (raw: a label update on each of N ready pods at once). */
      readonly burst: Series;
      /** Pool created → N ready sandboxes (ms); null for the raw baseline. */
      readonly poolFillMs: number | null;
      /** The controller's CPU per claim over the burst (ms); null for the raw baseline. */
      readonly cpuPerClaimMs: number | null;
      /** kube-apiserver's CPU over the burst (ms). */
      readonly apiserverCpuMs: number;
      /** Claims of the burst bound Cold (ours says so in status.launchType); null when not known. */
      readonly coldInBurst: number | null;
    }
  | {
      readonly ok: false;
      /** True when it ran and failed; false when it could not run here (not built, kinds not served). */
      readonly failed: boolean;
      /** Printed in its column: "not available: …" or "failed: …". */
      readonly reason: string;
    };

type Ok = Extract<Outcome, { ok: true }>;
type Unit = 'ms' | 's' | '/s' | 'n';
type Goal = { readonly bound: number; readonly label: string };
type Row = {
  readonly label: string;
  readonly unit: Unit;
  readonly pick: (o: Ok) => number | null;
  /** The bound on ours, when this row has one. */
  readonly goal?: Goal;
};

const P50_GOAL: Goal = { bound: 100, label: 'p50 ≤ 100 ms' };
const P99_GOAL: Goal = { bound: 500, label: 'p99 ≤ 500 ms' };

export const rows = (pool: number): readonly Row[] => [
  { label: '1 at a time: claim -> Ready, p50', unit: 'ms', pick: (o) => o.sequential.p50, goal: P50_GOAL },
  { label: '1 at a time: claim -> Ready, p99', unit: 'ms', pick: (o) => o.sequential.p99, goal: P99_GOAL },
  { label: `burst of ${pool}: claim -> Ready, p50`, unit: 'ms', pick: (o) => o.burst.p50, goal: P50_GOAL },
  { label: `burst of ${pool}: claim -> Ready, p99`, unit: 'ms', pick: (o) => o.burst.p99, goal: P99_GOAL },
  { label: `burst of ${pool}: claims per second`, unit: '/s', pick: (o) => o.burst.perSecond },
  { label: `burst of ${pool}: wall, all Ready`, unit: 's', pick: (o) => o.burst.wallMs },
  { label: `burst of ${pool}: bound Cold`, unit: 'n', pick: (o) => o.coldInBurst },
  { label: `pool of ${pool}: create -> all ready`, unit: 's', pick: (o) => o.poolFillMs },
  { label: 'controller CPU per claim, burst', unit: 'ms', pick: (o) => o.cpuPerClaimMs },
  { label: 'kube-apiserver CPU, burst', unit: 's', pick: (o) => o.apiserverCpuMs },
];

export function format(value: number | null, unit: Unit): string {
  if (value === null || Number.isNaN(value)) return '—';
  switch (unit) {
    case 'ms':
      if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
      return `${value.toFixed(value < 10 ? 1 : 0)} ms`;
    case 's':
      return `${(value / 1000).toFixed(2)} s`;
    case '/s':
      return `${value.toFixed(1)}/s`;
    case 'n':
      return String(value);
  }
}

/** `ours / base` as "0.42x" (below 1) or "3.1x"; "—" when either is missing. For a rate, below 1 is behind. */
export function ratio(ours: number | null, base: number | null): string {
  if (ours === null || base === null || Number.isNaN(ours) || Number.isNaN(base) || base === 0) return '—';
  return `${(ours / base).toFixed(ours / base < 1 ? 2 : 1)}x`;
}

/** "met" / "NOT met" against the row's goal, "—" when the row has none or ours has no figure. */
export function mark(value: number | null, goal: Goal | undefined): string {
  if (goal === undefined || value === null || Number.isNaN(value)) return '—';
  return value <= goal.bound ? `met (${goal.label})` : `NOT met (${goal.label})`;
}

export type Subjects = { readonly raw: Outcome; readonly peer: Outcome; readonly ours: Outcome };

const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

/** The table's lines: a subject without figures shows its reason in its first cell. */
export function table(pool: number, sequential: number, subjects: Subjects): string[] {
  const cell = (o: Outcome, row: Row, first: boolean) =>
    o.ok ? format(row.pick(o), row.unit) : first ? o.reason : '—';
  const pick = (o: Outcome, row: Row) => (o.ok ? row.pick(o) : null);
  const header = [
    `pool ${pool}, ${sequential} one at a time`,
    'raw (label update)',
    'agent-sandbox',
    'ours',
    'ours/peer',
    'ours/raw',
    'goal (ours)',
  ];
  return [
    line(header),
    line(header.map(() => '---')),
    ...rows(pool).map((row, i) => {
      const ours = pick(subjects.ours, row);
      return line([
        row.label,
        cell(subjects.raw, row, i === 0),
        cell(subjects.peer, row, i === 0),
        cell(subjects.ours, row, i === 0),
        ratio(ours, pick(subjects.peer, row)),
        ratio(ours, pick(subjects.raw, row)),
        mark(ours, row.goal),
      ]);
    }),
  ];
}

/** Whether ours is ahead of the peer on each latency row (lower) and on the rate (higher). */
export function aheadOfPeer(pool: number, subjects: Subjects): string[] {
  const { ours, peer } = subjects;
  if (!ours.ok || !peer.ok)
    return [`  ? ahead of the peer: ${!ours.ok ? 'ours' : 'the peer'} has no figures`];
  return rows(pool)
    .filter((row) => row.goal !== undefined || row.unit === '/s')
    .map((row) => {
      const [o, p] = [row.pick(ours), row.pick(peer)];
      if (o === null || p === null || Number.isNaN(o) || Number.isNaN(p))
        return `  ? ahead of the peer, ${row.label}: not measured`;
      const ahead = row.unit === '/s' ? o > p : o < p;
      return `  ${ahead ? 'met ' : 'NOT '} ahead of the peer, ${row.label}: ${format(o, row.unit)} against ${format(p, row.unit)}`;
    });
}
