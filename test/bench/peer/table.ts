/** Prints issue 13's table for one N: one row per figure, the three subjects, and ours/raw and ours/peer. */
import { printGoals } from './goals.ts';
import { cpuPerSandbox, requestsPerSandbox, type SubjectResult } from './run-subject.ts';

type Row = { label: string; unit: 's' | 'ms' | 'MiB' | 'n'; pick: (r: SubjectResult) => number | null };

const ROWS: readonly Row[] = [
  { label: 'create -> pod Running, p50', unit: 's', pick: (r) => r.createToRunningP50 },
  { label: 'wall, all Running', unit: 's', pick: (r) => r.wallRunning },
  { label: 'delete -> pod gone, p50', unit: 's', pick: (r) => r.deleteToPodGoneP50 },
  { label: 'delete -> Sandbox gone, p50', unit: 's', pick: (r) => r.deleteToSandboxGoneP50 },
  { label: 'wall, all gone', unit: 's', pick: (r) => r.wallGone },
  { label: 'operator CPU, create phase', unit: 's', pick: (r) => r.create.controllerCpuMs },
  { label: 'operator CPU, delete phase', unit: 's', pick: (r) => r.remove.controllerCpuMs },
  { label: 'operator CPU per sandbox, create', unit: 'ms', pick: (r) => cpuPerSandbox(r, 'create') },
  { label: 'operator CPU per sandbox, delete', unit: 'ms', pick: (r) => cpuPerSandbox(r, 'remove') },
  { label: 'operator RSS idle', unit: 'MiB', pick: (r) => r.rss?.idle ?? null },
  { label: 'operator RSS steady (all Running)', unit: 'MiB', pick: (r) => r.rss?.steady ?? null },
  { label: 'operator RSS peak', unit: 'MiB', pick: (r) => r.rss?.peak ?? null },
  { label: 'API requests per sandbox, create', unit: 'n', pick: (r) => requestsPerSandbox(r, 'create') },
  { label: 'API requests per sandbox, delete', unit: 'n', pick: (r) => requestsPerSandbox(r, 'remove') },
  { label: 'kube-apiserver CPU, create phase', unit: 's', pick: (r) => r.create.apiserverCpuMs },
  { label: 'kube-apiserver CPU, delete phase', unit: 's', pick: (r) => r.remove.apiserverCpuMs },
];

function format(value: number | null, unit: Row['unit']): string {
  if (value === null || Number.isNaN(value)) return '—';
  switch (unit) {
    case 's':
      return `${(value / 1000).toFixed(2)} s`;
    case 'ms':
      return `${value.toFixed(1)} ms`;
    case 'MiB':
      return `${value.toFixed(0)} MiB`;
    case 'n':
      return value.toFixed(2);
  }
}

function ratioOf(ours: number | null, base: number | null): string {
  if (ours === null || base === null || Number.isNaN(ours) || Number.isNaN(base) || base === 0) return '—';
  return `${(ours / base).toFixed(1)}x`;
}

const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

export function printTable(count: number, results: readonly SubjectResult[], peerNote: string | null): void {
  const by = (name: SubjectResult['subject']) => results.find((r) => r.subject === name) ?? null;
  const [raw, peer, ours, profiled] = [by('raw'), by('agent-sandbox'), by('ours'), by('ours (profiled)')];
  const extra = profiled === null ? [] : ['ours under --cpu-prof'];
  console.log(`\n## Side by side, N = ${count} (one pod each, created at once, then deleted at once)`);
  if (peerNote !== null) console.log(`  ${peerNote}`);
  console.log(line([`N = ${count}`, 'raw pods', 'agent-sandbox', 'ours', 'ours/raw', 'ours/peer', ...extra]));
  console.log(line(['---', '---', '---', '---', '---', '---', ...extra.map(() => '---')]));
  for (const row of ROWS) {
    const [r, p, o] = [raw, peer, ours].map((s) => (s === null ? null : row.pick(s)));
    console.log(
      line([
        row.label,
        format(r ?? null, row.unit),
        format(p ?? null, row.unit),
        format(o ?? null, row.unit),
        ratioOf(o ?? null, r ?? null),
        ratioOf(o ?? null, p ?? null),
        ...(profiled === null ? [] : [format(row.pick(profiled), row.unit)]),
      ]),
    );
  }
  for (const result of results)
    if (!result.settled)
      console.log(`  note: ${result.subject} had not gone quiet when a phase closed (30 s cap)`);
  if (ours !== null) printGoals({ raw, peer, ours });
  printRequests('create', count, results, (r) => r.create.requests);
  printRequests('delete', count, results, (r) => r.remove.requests);
}

function printRequests(
  phase: string,
  count: number,
  results: readonly SubjectResult[],
  pick: (r: SubjectResult) => Map<string, number>,
): void {
  const keys = [...new Set(results.flatMap((r) => [...pick(r).keys()]))]
    .filter((key) => !key.endsWith(' '))
    .sort();
  console.log(
    `\n  API requests per sandbox, ${phase} phase, by verb and resource (apiserver_request_total deltas, all clients: the bench's own ${phase} is 1.00 of them)`,
  );
  console.log(line(['verb resource', ...results.map((r) => r.subject)]));
  console.log(line(['---', ...results.map(() => '---')]));
  for (const key of keys) {
    const cells = results.map((r) => ((pick(r).get(key) ?? 0) / count).toFixed(2));
    if (cells.every((cell) => cell === '0.00')) continue;
    console.log(line([key, ...cells]));
  }
}
