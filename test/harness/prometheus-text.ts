import type { Registry } from 'prom-client';

/** A reader of the Prometheus text exposition format, enough to check which series an endpoint serves. */
export type Sample = {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  value: number;
};

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The series named `name` carrying every label in `labels` (with the given value, when one is given). */
export function series(
  samples: readonly Sample[],
  name: string,
  labels: Readonly<Record<string, string | true>> = {},
): Sample[] {
  return samples.filter(
    (s) =>
      s.name === name &&
      Object.entries(labels).every(([key, value]) =>
        value === true ? key in s.labels : s.labels[key] === value,
      ),
  );
}

/** Every metric family a registry's text names, with a histogram's `_bucket`, `_sum` and `_count`. */
export const seriesNames = (samples: readonly Sample[]) => new Set(samples.map((s) => s.name));

/** The series names a prom-client registry can serve: each metric, a histogram as `_bucket`/`_sum`/`_count`. */
export function registrySeriesNames(registry: Registry): Set<string> {
  const names = new Set<string>();
  for (const metric of registry.getMetricsAsArray()) {
    const type = String(metric.type);
    if (type === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(metric.name + suffix);
    else names.add(metric.name);
  }
  return names;
}

/**
 * The Sandbox controller's reconciles so far, and whether it has work queued or under way, from the operator's
 * /metrics on this port: how a test waits for the turns an event brought to be over.
 */
export async function sandboxControllerActivity(
  port: number,
): Promise<{ readonly reconciles: number; readonly busy: number }> {
  const samples = parseExposition(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
  const sum = (name: string, labels: Record<string, string>) =>
    series(samples, name, labels).reduce((total, sample) => total + sample.value, 0);
  return {
    reconciles: sum('controller_runtime_reconcile_total', { controller: 'sandbox' }),
    busy:
      sum('workqueue_depth', { name: 'sandbox' }) +
      sum('controller_runtime_active_workers', { controller: 'sandbox' }),
  };
}
