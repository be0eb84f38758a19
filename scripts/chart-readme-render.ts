// The chart README with its values table regenerated from values.schema.json and values.yaml, formatted as
// `npm run format` would (so the check and Prettier agree on the table's layout). Pure but for the reads.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { parse } from 'yaml';
import { valuesTable, withValuesTable } from './values-table.ts';

export const CHART_DIR = join(import.meta.dirname, '..', 'charts', 'sandbox-operator');
export const CHART_README = join(CHART_DIR, 'README.md');

/** The README as it is, and as it should be. */
export async function renderChartReadme(): Promise<{ readonly current: string; readonly next: string }> {
  const schema: unknown = JSON.parse(await readFile(join(CHART_DIR, 'values.schema.json'), 'utf8'));
  const values: unknown = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8'));
  const current = await readFile(CHART_README, 'utf8');
  const options = (await resolveConfig(CHART_README)) ?? {};
  const next = await format(withValuesTable(current, valuesTable(schema, values)), {
    ...options,
    filepath: CHART_README,
  });
  return { current, next };
}
