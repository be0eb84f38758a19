// `npm run test:mutation` runs this after `stryker run`: each module's mutation score from the JSON report,
// and a failed run when one is below MODULE_THRESHOLD (scripts/mutation-modules.ts, docs/mutation-testing.md).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MODULE_THRESHOLD, scoreLines, scoreModules, type MutationReport } from './mutation-modules.ts';

const reportPath = join(import.meta.dirname, '..', 'reports', 'mutation', 'mutation.json');

const report = JSON.parse(await readFile(reportPath, 'utf8')) as MutationReport;
const { scores, failures } = scoreModules(report);
process.stdout.write(`Mutation score by module (each at least ${MODULE_THRESHOLD} %):\n`);
for (const line of scoreLines(scores)) process.stdout.write(`  ${line}\n`);
if (failures.length > 0) {
  for (const failure of failures) process.stderr.write(`mutation: ${failure}\n`);
  process.exitCode = 1;
}
