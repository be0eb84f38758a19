// `npm run chart:readme [-- --check]`: regenerates the values table in charts/sandbox-operator/README.md
// from values.schema.json and values.yaml; with --check, fails when the README is out of date.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { parse } from 'yaml';
import { valuesTable, withValuesTable } from './values-table.ts';

const chart = join(import.meta.dirname, '..', 'charts', 'sandbox-operator');
const readmePath = join(chart, 'README.md');

async function main(): Promise<void> {
  const schema: unknown = JSON.parse(await readFile(join(chart, 'values.schema.json'), 'utf8'));
  const values: unknown = parse(await readFile(join(chart, 'values.yaml'), 'utf8'));
  const readme = await readFile(readmePath, 'utf8');
  // Formatted as `npm run format` would, so the check and Prettier agree on the table's layout.
  const options = (await resolveConfig(readmePath)) ?? {};
  const next = await format(withValuesTable(readme, valuesTable(schema, values)), {
    ...options,
    filepath: readmePath,
  });
  if (process.argv.includes('--check')) {
    if (next !== readme) {
      process.stderr.write(`${readmePath} is out of date: run \`npm run chart:readme\`\n`);
      process.exitCode = 1;
    }
    return;
  }
  if (next !== readme) await writeFile(readmePath, next);
  process.stdout.write(`wrote ${readmePath}\n`);
}

await main();
