/** Printing benchmark figures: one line per measurement, ratios against a baseline measured in the same run. */

export const ms = (value: number) =>
  value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(value < 1 ? 4 : 1)} ms`;

export function heading(title: string): void {
  console.log(`\n## ${title}`);
}

export function figure(label: string, value: string, note = ''): void {
  console.log(`  ${label.padEnd(58)} ${value.padStart(14)}${note ? `  ${note}` : ''}`);
}

export function ratio(label: string, baseline: number, measured: number): void {
  figure(
    label,
    `${(baseline / measured).toFixed(baseline / measured >= 100 ? 0 : 1)}x`,
    `(${ms(baseline)} / ${ms(measured)})`,
  );
}

export async function timed<T>(run: () => Promise<T>): Promise<{ value: T; elapsedMs: number }> {
  const started = performance.now();
  const value = await run();
  return { value, elapsedMs: performance.now() - started };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
