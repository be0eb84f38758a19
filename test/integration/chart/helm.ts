/** Runs the built helm on the chart: lint, and template into parsed objects. */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { ensureBinaries, TOOLS } from '@sandbox-operator/local-cluster';

const run = promisify(execFile);
export const CHART = 'charts/sandbox-operator';
export const KUBE_VERSION = TOOLS['kube-apiserver'].version;

export type HelmResult = { readonly exitCode: number; readonly stdout: string; readonly stderr: string };

export async function helm(args: readonly string[]): Promise<HelmResult> {
  const { helm: binary } = await ensureBinaries({ tools: ['helm'] });
  try {
    const { stdout, stderr } = await run(binary, [...args], { maxBuffer: 16 * 1024 * 1024 });
    return { exitCode: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { exitCode: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** Writes values to a file, for `helm -f` (nested values and lists without --set escaping). */
export async function valuesFile(values: object): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'chart-values-'));
  const file = join(dir, 'values.yaml');
  await writeFile(file, stringify(values));
  return file;
}

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
};

export type Rendered = { readonly text: string; readonly objects: readonly Manifest[] };

/** `helm template` with the given values; fails the test with helm's stderr when rendering fails. */
/** What to render: a release name and namespace, and `tests` for the `helm test` hooks (off, as for an install). */
export type TemplateOptions = { release?: string; namespace?: string; tests?: boolean };

export async function template(values: object = {}, options: TemplateOptions = {}): Promise<Rendered> {
  const result = await templateResult(values, options);
  if (result.exitCode !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  const objects = parseAllDocuments(result.stdout)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((object): object is Manifest => object !== null);
  return { text: result.stdout, objects };
}

export async function templateResult(values: object, options: TemplateOptions = {}): Promise<HelmResult> {
  return helm([
    'template',
    options.release ?? 'sandbox-operator',
    CHART,
    '--namespace',
    options.namespace ?? 'sandbox-system',
    '--kube-version',
    KUBE_VERSION,
    '-f',
    await valuesFile(values),
    ...(options.tests === true ? [] : ['--skip-tests']),
  ]);
}

export function find(rendered: Rendered, kind: string, name?: string): Manifest {
  const found = rendered.objects.find(
    (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
  );
  if (!found) throw new Error(`no ${kind}${name ? ` ${name}` : ''} in the rendered chart`);
  return found;
}

export const kinds = (rendered: Rendered) =>
  rendered.objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
