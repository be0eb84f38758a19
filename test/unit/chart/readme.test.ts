import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { valuesTable, withValuesTable } from '../../../scripts/values-table.ts';

const run = promisify(execFile);
const chart = 'charts/sandbox-operator';

type Schema = { type?: unknown; properties?: Record<string, Schema> };
const leaves = (schema: Schema, path: string[] = []): string[] =>
  Object.entries(schema.properties ?? {}).flatMap(([key, child]) =>
    child.properties && child.type === 'object' ? leaves(child, [...path, key]) : [[...path, key].join('.')],
  );

describe('the chart README', () => {
  it('has the values table generated from values.schema.json and values.yaml (npm run chart:readme)', async () => {
    let failure = '';
    try {
      await run('npx', ['tsx', 'scripts/chart-readme.ts', '--check']);
    } catch (error) {
      failure = (error as { stderr?: string }).stderr ?? String(error);
    }
    expect(failure).toBe('');
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
