/**
 * The sidecar's homes stay acyclic (issue 10): a circle between two files means one of them is in the
 * wrong home. The linter fences imports between homes; this walks every relative import in the folder.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = normalize(join(import.meta.dirname, '../../../operator/sidecar'));
const IMPORT = /(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g;

function graph(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const entry of readdirSync(ROOT, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.ts')) continue;
    const file = join(ROOT, entry);
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((m) => normalize(join(dirname(file), m[1]!)));
    edges.set(file, targets);
  }
  return edges;
}

function circles(edges: Map<string, string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      if (!edges.has(next)) continue;
      if (state.get(next) === 'open') {
        found.push([...path.slice(path.indexOf(next)), next].map((f) => relative(ROOT, f)).join(' → '));
      } else if (state.get(next) === undefined) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of edges.keys()) if (state.get(file) === undefined) visit(file);
  return found;
}

describe('operator/sidecar layout', () => {
  it('has the four homes and no file outside them', () => {
    const top = readdirSync(ROOT, { withFileTypes: true });
    expect(top.filter((e) => e.isFile()).map((e) => e.name)).toEqual([]);
    expect(top.map((e) => e.name).sort()).toEqual(['contract', 'host', 'injection', 'process']);
  });

  it('has no import circle', () => {
    const edges = graph();
    expect(edges.size).toBeGreaterThan(20);
    expect(circles(edges)).toEqual([]);
  });
});
