/**
 * Reading what `node --cpu-prof` and a heap snapshot wrote: self time by function and by file, and retained
 * bytes by constructor. Also a command: `npx tsx test/bench/peer/profile.ts DIR` summarizes DIR again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
};
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

const here = process.cwd();
const where = (url: string) => {
  if (url === '') return '(native)';
  const path = url.replace(/^file:\/\//, '');
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path);
  if (inModules && inModules[1] !== '.cache') return `${inModules[1]}/${inModules[2]}`;
  return path.startsWith('/') ? relative(here, path) : path;
};

const sourceMaps = new Map<string, SourceMap | null>();
/** A frame of a bundle (a .mjs with its map beside it) as the source file and line it came from. */
function origin(url: string, line: number, column: number): { url: string; line: number } {
  const path = url.replace(/^file:\/\//, '');
  if (!path.endsWith('.mjs')) return { url, line };
  if (!sourceMaps.has(path)) {
    const file = `${path}.map`;
    sourceMaps.set(
      path,
      existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as SourceMapPayload) : null,
    );
  }
  const entry = sourceMaps.get(path)?.findEntry(line, column);
  // A generated position no mapping covers (the bundle's own glue code) has no original source.
  if (entry === undefined || !('originalSource' in entry) || typeof entry.originalSource !== 'string')
    return { url, line };
  return { url: resolve(dirname(path), entry.originalSource), line: entry.originalLine };
}

/** Self time in ms per function ("name file:line") and per file, from a .cpuprofile's samples. */
export function selfTimes(profile: CpuProfile): {
  total: number;
  byFunction: Map<string, number>;
  byFile: Map<string, number>;
  byPackage: Map<string, number>;
} {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = nodes.get(id);
    if (node === undefined) return;
    const { functionName, url: generated, lineNumber, columnNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') return;
    total += ms;
    const { url, line } = origin(generated, lineNumber, columnNumber);
    const file = where(url);
    const fn = `${functionName || '(anonymous)'} ${file}:${line + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    byFile.set(file, (byFile.get(file) ?? 0) + ms);
    const pkg = file.startsWith('operator/') ? file.split('/').slice(0, 2).join('/') : file.split('/')[0]!;
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
  });
  return { total, byFunction, byFile, byPackage };
}

function top(title: string, entries: Map<string, number>, total: number, n: number): void {
  console.log(`\n  ${title}`);
  for (const [key, ms] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, n))
    console.log(`  ${ms.toFixed(0).padStart(7)} ms ${((ms / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
}

type HeapSnapshot = {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
};

/** Self bytes by node type and constructor name, from a .heapsnapshot. */
export function heapByConstructor(snapshot: HeapSnapshot): Map<string, { bytes: number; count: number }> {
  const fields = snapshot.snapshot.meta.node_fields;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const types = snapshot.snapshot.meta.node_types[0];
  const out = new Map<string, { bytes: number; count: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const type = types[snapshot.nodes[i + typeAt]!] ?? '?';
    const name = type === 'object' || type === 'closure' ? snapshot.strings[snapshot.nodes[i + nameAt]!] : '';
    const key = `${type}${name ? ` ${name}` : ''}`;
    const entry = out.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += snapshot.nodes[i + sizeAt]!;
    entry.count += 1;
    out.set(key, entry);
  }
  return out;
}

export async function summarizeProfile(dir: string): Promise<void> {
  const files = (await readdir(dir)).sort();
  for (const file of files.filter((f) => f.endsWith('.cpuprofile'))) {
    const times = selfTimes(JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile);
    console.log(
      `\n## CPU profile of ours: ${file} (${(times.total / 1000).toFixed(2)} s of samples, idle excluded)`,
    );
    top(
      'self time by package (operator/<dir>, or node_modules package, or node: internals)',
      times.byPackage,
      times.total,
      15,
    );
    top('self time by file', times.byFile, times.total, 25);
    top('self time by function', times.byFunction, times.total, 40);
  }
  for (const file of files.filter((f) => f.endsWith('.heapsnapshot'))) {
    const heap = heapByConstructor(JSON.parse(await readFile(join(dir, file), 'utf8')) as HeapSnapshot);
    const total = [...heap.values()].reduce((sum, e) => sum + e.bytes, 0);
    console.log(
      `\n## Heap snapshot of ours at steady state: ${file} (${(total / 2 ** 20).toFixed(1)} MiB of heap objects)`,
    );
    for (const [key, e] of [...heap].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 25))
      console.log(
        `  ${(e.bytes / 2 ** 20).toFixed(1).padStart(7)} MiB ${String(e.count).padStart(9)}  ${key}`,
      );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await summarizeProfile(process.argv[2] ?? '.');
