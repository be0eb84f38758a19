import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderChartReadme } from '../../../scripts/chart-readme-render.ts';
import { valuesTable, withValuesTable } from '../../../scripts/values-table.ts';

const chart = 'charts/sandbox-operator';

type Schema = { type?: unknown; properties?: Record<string, Schema> };
const leaves = (schema: Schema, path: string[] = []): string[] =>
  Object.entries(schema.properties ?? {}).flatMap(([key, child]) =>
    child.properties && child.type === 'object' ? leaves(child, [...path, key]) : [[...path, key].join('.')],
  );

describe('the chart README', () => {
  it('has the values table generated from values.schema.json and values.yaml (npm run chart:readme)', async () => {
    // In-process, not `npx tsx scripts/chart-readme.ts --check`: a spawned tsx took over the 5 s a unit test
    // has on 2 loaded cores. The script is this function and a write.
    const { current, next } = await renderChartReadme();
    expect(
      current === next,
      'charts/sandbox-operator/README.md is out of date: run `npm run chart:readme`',
    ).toBe(true);
  });

  it('lists every value of the schema with its default', async () => {
    const schema = JSON.parse(await readFile(`${chart}/values.schema.json`, 'utf8')) as Schema;
    const readme = await readFile(`${chart}/README.md`, 'utf8');
    const keys = leaves(schema);
    expect(keys).toContain('metrics.prometheusRule.blockedDeletionSeconds');
    for (const key of keys) expect(readme, key).toContain(`| \`${key}\``);
    expect(readme).toMatch(/\| `replicaCount` +\| integer +\| `1` +\|/);
  });

  it('stands alone once packaged: no relative links into the repository', async () => {
    const readme = await readFile(`${chart}/README.md`, 'utf8');
    expect(readme.match(/\]\((?!https?:\/\/|#)[^)]*\)/g) ?? []).toEqual([]);
  });

  it('refuses a README without the table markers, naming them', () => {
    expect(() => withValuesTable('# no markers', valuesTable({}, {}))).toThrow(/values-table:start/);
  });

  it('renders a default in the table from values.yaml', () => {
    const table = valuesTable(
      { properties: { a: { type: 'object', properties: { b: { type: 'integer', description: 'x | y' } } } } },
      parse('a:\n  b: 3\n'),
    );
    expect(table).toContain('| `a.b` | integer | `3` | x \\| y |');
  });
});
