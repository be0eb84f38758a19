/** The soak's summary: sequences, operations, violations (by signature, with seeds), the shortest traces. */
import type { SeedOutcome } from './runner.ts';

export type SoakTotals = {
  readonly seeds: number;
  readonly sequences: number;
  readonly operations: number;
  readonly violations: number;
  readonly failingSeeds: readonly number[];
  readonly harnessErrors: readonly string[];
  readonly bySignature: Readonly<Record<string, readonly number[]>>;
  readonly releaseMsMax: number;
  readonly releaseMsP50: number;
  readonly namespaceMsMax: number;
  readonly namespaceMsP50: number;
  readonly coverage: Readonly<Record<string, number>>;
};

const percentile = (values: readonly number[], p: number) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
};

export function totals(outcomes: readonly SeedOutcome[]): SoakTotals {
  const bySignature: Record<string, number[]> = {};
  for (const o of outcomes)
    for (const v of o.first?.violations ?? []) {
      const seeds = (bySignature[v.signature] ??= []);
      if (!seeds.includes(o.seed)) seeds.push(o.seed);
    }
  const coverage: Record<string, number> = {};
  for (const o of outcomes)
    for (const [k, v] of Object.entries(o.coverage)) coverage[k] = (coverage[k] ?? 0) + v;
  const release = outcomes.flatMap((o) => o.releaseMs);
  const namespaces = outcomes.flatMap((o) => o.namespaceMs);
  return {
    seeds: outcomes.length,
    sequences: outcomes.reduce((n, o) => n + o.runs, 0),
    operations: outcomes.reduce((n, o) => n + o.operations, 0),
    violations: outcomes.reduce((n, o) => n + (o.first?.violations.length ?? 0), 0),
    failingSeeds: outcomes.filter((o) => o.first !== undefined).map((o) => o.seed),
    harnessErrors: outcomes.flatMap((o) => (o.error === undefined ? [] : [`seed ${o.seed}: ${o.error}`])),
    bySignature,
    releaseMsMax: Math.max(0, ...release),
    releaseMsP50: percentile(release, 0.5),
    namespaceMsMax: Math.max(0, ...namespaces),
    namespaceMsP50: percentile(namespaces, 0.5),
    coverage,
  };
}

export function failureReport(o: SeedOutcome): string {
  const shortest = o.shortest ?? o.first;
  if (!shortest) return '';
  return [
    `seed ${o.seed}${o.path === undefined ? '' : ` path ${o.path}`} (replay: SOAK_SEEDS=${o.seed}${o.path === undefined ? '' : ` SOAK_PATH=${o.path}`} npm run soak)`,
    `  shortest failing trace (${o.runs} run(s) of this seed), namespace ${shortest.namespace}:`,
    ...shortest.trace.map((line) => `    ${line}`),
    `  violations:`,
    ...shortest.violations.map((v) => `    [${v.signature}] ${v.message}`),
    ...(o.first !== shortest
      ? [
          '  first failing run:',
          ...(o.first?.violations ?? []).map((v) => `    [${v.signature}] ${v.message}`),
        ]
      : []),
  ].join('\n');
}

export function summary(t: SoakTotals, extra: Readonly<Record<string, unknown>>): string {
  return [
    `soak: ${t.sequences} sequences (${t.seeds} seeds), ${t.operations} operations, ${t.violations} violations`,
    `  failing seeds: ${t.failingSeeds.length === 0 ? 'none' : t.failingSeeds.join(', ')}`,
    ...Object.entries(t.bySignature).map(
      ([signature, seeds]) => `  ${signature}: ${seeds.length} seed(s): ${seeds.slice(0, 20).join(', ')}`,
    ),
    `  issues 25, 27 and 28 judged: ${Object.entries(t.coverage)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `  release after exclusive: p50 ${t.releaseMsP50} ms, max ${t.releaseMsMax} ms; namespace gone: p50 ${t.namespaceMsP50} ms, max ${t.namespaceMsMax} ms`,
    ...Object.entries(extra).map(([k, v]) => `  ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`),
    ...t.harnessErrors.map((e) => `  harness error: ${e}`),
  ].join('\n');
}
