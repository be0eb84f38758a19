/**
 * `npm run crds` writes the manifests generated from operator/api: the CRDs to crds/ and the chart's crds/,
 * the admission policy to crds/policies/ and, as a Helm template, to the chart's templates/, and Argo CD's
 * health checks (operator/api/health/argocd) to crds/argocd/.
 * `npm run crds:check` exits non-zero, naming the files, on drift.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ARGOCD_HEALTH_KINDS,
  argoCdHealthScriptPath,
  renderArgoCdHealth,
  type ArgoCdHealthKind,
} from './render-argocd.ts';
import { renderChartAdmissionPolicy, renderCrds, renderPolicies } from './render-crds.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function generatedFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [file, text] of Object.entries(renderCrds())) {
    files[join('crds', file)] = text;
    files[join('charts', 'sandbox-operator', 'crds', file)] = text;
  }
  for (const [file, text] of Object.entries(renderPolicies())) files[join('crds', 'policies', file)] = text;
  files[join('charts', 'sandbox-operator', 'templates', 'admission-policy.yaml')] =
    renderChartAdmissionPolicy();
  const scripts = Object.fromEntries(
    ARGOCD_HEALTH_KINDS.map((kind) => [kind, readFileSync(join(root, argoCdHealthScriptPath(kind)), 'utf8')]),
  ) as Record<ArgoCdHealthKind, string>;
  for (const [file, text] of Object.entries(renderArgoCdHealth(scripts))) files[join('crds', file)] = text;
  return files;
}

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes('--check');
  const drifted: string[] = [];
  for (const [file, text] of Object.entries(generatedFiles())) {
    const path = join(root, file);
    if (check) {
      if ((await readOrEmpty(path)) !== text) drifted.push(file);
    } else {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
      console.log(`wrote ${file}`);
    }
  }
  if (drifted.length > 0) {
    console.error(`generated manifests drifted from operator/api (run npm run crds): ${drifted.join(', ')}`);
    process.exit(1);
  }
}
