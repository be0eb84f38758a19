// `npm run chart:readme [-- --check]`: regenerates the values table in charts/sandbox-operator/README.md
// from values.schema.json and values.yaml; with --check, fails when the README is out of date.
import { writeFile } from 'node:fs/promises';
import { CHART_README, renderChartReadme } from './chart-readme-render.ts';

async function main(): Promise<void> {
  const { current, next } = await renderChartReadme();
  if (process.argv.includes('--check')) {
    if (next !== current) {
      process.stderr.write(`${CHART_README} is out of date: run \`npm run chart:readme\`\n`);
      process.exitCode = 1;
    }
    return;
  }
  if (next !== current) await writeFile(CHART_README, next);
  process.stdout.write(`wrote ${CHART_README}\n`);
}

await main();
