/**
 * The per-module check `npm run test:mutation` ends with (scripts/mutation-modules.ts): scores as Stryker
 * counts them, one module per mutated file, and a failure for each module below the threshold.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  MUTATION_MODULES,
  scoreLines,
  scoreModules,
  type MutationReport,
} from '../../../scripts/mutation-modules.ts';

const mutants = (counts: Record<string, number>) =>
  Object.entries(counts).flatMap(([status, count]) => Array.from({ length: count }, () => ({ status })));

const modules = [
  { name: 'core', paths: ['operator/core/'] },
  { name: 'rule', paths: ['operator/rule.ts'] },
];

describe('the mutation score of each module', () => {
  it('counts killed and timed-out mutants against survivors and uncovered ones, across a folder’s files', () => {
    const report: MutationReport = {
      files: {
        'operator/core/a.ts': { mutants: mutants({ Killed: 30, Survived: 1 }) },
        'operator/core/b.ts': { mutants: mutants({ Killed: 8, Timeout: 1, NoCoverage: 1 }) },
        'operator/rule.ts': {
          mutants: mutants({ Killed: 19, Survived: 1, CompileError: 3, RuntimeError: 1 }),
        },
      },
    };
    expect(scoreModules(report, modules, 95)).toEqual({
      scores: [
        { name: 'core', files: 2, detected: 39, undetected: 2, score: (100 * 39) / 41 },
        { name: 'rule', files: 1, detected: 19, undetected: 1, score: 95 },
      ],
      failures: [],
    });
  });

  it('fails a module below the threshold, whatever the total', () => {
    const report: MutationReport = {
      files: {
        'operator/core/a.ts': { mutants: mutants({ Killed: 200 }) },
        'operator/rule.ts': { mutants: mutants({ Killed: 18, Survived: 1, NoCoverage: 1 }) },
      },
    };
    expect(scoreModules(report, modules, 95).failures).toEqual(['rule: 90.00 % is below 95 %']);
  });

  it('fails a module with no mutant scored, and a mutated file that no module or two modules hold', () => {
    const report: MutationReport = {
      files: {
        'operator/core/a.ts': { mutants: mutants({ Killed: 1 }) },
        'operator/other.ts': { mutants: mutants({ Killed: 1 }) },
      },
    };
    expect(scoreModules(report, modules, 95).failures).toEqual([
      'operator/other.ts was mutated but belongs to no module (scripts/mutation-modules.ts)',
      'rule: no mutant scored (is it still in stryker.config.json?)',
    ]);
    const overlapping = [...modules, { name: 'all', paths: ['operator/'] }];
    expect(scoreModules(report, overlapping, 95).failures).toContain(
      'operator/core/a.ts belongs to core and all: one module each',
    );
  });

  it('prints one line per module with its score and counts', () => {
    const { scores } = scoreModules(
      { files: { 'operator/rule.ts': { mutants: mutants({ Killed: 61, Survived: 1 }) } } },
      modules,
      95,
    );
    expect(scoreLines(scores)).toEqual([
      'core       —    0/0 killed, 0 survivors, 0 files',
      'rule   98.39 %  61/62 killed, 1 survivor, 1 file',
    ]);
  });

  it('holds every file stryker.config.json mutates in one module, by its folder or its own path', async () => {
    const config = JSON.parse(await readFile('stryker.config.json', 'utf8')) as { mutate: string[] };
    const paths = MUTATION_MODULES.flatMap((module) => module.paths);
    const mutated = config.mutate.filter((entry) => !entry.startsWith('!'));
    expect(mutated.map((entry) => entry.replace(/\*\*\/\*\.ts$/, ''))).toEqual(paths);
  });
});
