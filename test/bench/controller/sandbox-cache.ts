/**
 * Bytes per cached Sandbox (issue 26, #5), under the compiled build: the store's code bundled with the image's
 * esbuild options (scripts/bundle-operator.mjs) and run by plain node, as the operator runs. Sandboxes arrive
 * as a watch delivers them, each its own JSON text; heap used after a full GC, against the same process
 * before. The baseline, in the same run: each Sandbox kept as parsed whole (what the cache kept before it kept
 * only a Sandbox's state: no template, no labels, only the operator's annotations).
 *
 * Two shapes: a GitOps-applied Sandbox (managedFields, kubectl's last-applied copy, a 3 KiB template), and
 * a tenant's largest (a template near the API server's object limit, every field within its own bound).
 */
import { spawn } from 'node:child_process';
import { bundleScript } from '../../../scripts/bundle-operator.mjs';
import { figure, heading } from '../report.ts';

const SHAPES = [
  { name: 'GitOps-applied, 3 KiB template', count: 2_000, templateBytes: 3 * 1024, lastApplied: true },
  { name: "a tenant's largest, 1.4 MiB template", count: 60, templateBytes: 1400 * 1024, lastApplied: false },
] as const;

/** The measurement, as one module: our modules imported by path, bundled as the image bundles them. */
const SCRIPT = `
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseSandbox } from './operator/api/parse.ts';
import { ClusterStore } from './operator/controller/cache/store.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const heapUsed = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
const { count, templateBytes, lastApplied } = JSON.parse(process.env.BENCH_SANDBOX_SHAPE);

// Env values of 32 KiB at most (the template's bound on one value), as many as the size asks.
function template(i) {
  const env = [];
  for (let left = templateBytes, j = 0; left > 0; left -= 32768, j++)
    env.push({ name: 'V' + j, value: String(i % 10).repeat(Math.min(left, 32768)) });
  return { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'agent', image: 'agent:1', env }] } };
}

function sandbox(i) {
  const name = 'sbx-' + String(i).padStart(5, '0');
  const spec = { worktree: 'wt-' + (i % 50), replicas: 1, podTemplate: template(i) };
  const annotations = { 'sandbox.agents.dev/adopted-from': 'ledger' };
  if (lastApplied)
    annotations['kubectl.kubernetes.io/last-applied-configuration'] = JSON.stringify({
      apiVersion: 'sandbox.agents.dev/v1alpha1', kind: 'Sandbox', metadata: { name, namespace: 'bench' }, spec,
    });
  return {
    apiVersion: 'sandbox.agents.dev/v1alpha1',
    kind: 'Sandbox',
    metadata: {
      name, namespace: 'bench', uid: 'uid-' + i, resourceVersion: String(1000 + i), generation: 1,
      creationTimestamp: '2026-12-01T12:00:00Z', labels: { team: 'a' }, annotations,
      finalizers: ['sandbox.agents.dev/exclusivity'],
      managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:podTemplate': { 'f:spec': { 'f:containers': {} } }, 'f:replicas': {} } } }],
    },
    spec,
    status: { observedGeneration: 1, phase: 'Running', ready: '1/1', pods: { total: 1, ready: 1 } },
  };
}
const events = () => Array.from({ length: count }, (_, i) => JSON.stringify(sandbox(i)));

async function measure(keep) {
  const before = heapUsed();
  const texts = events();
  const kept = keep(texts);
  texts.length = 0;
  await new Promise((resolve) => setImmediate(resolve));
  const used = heapUsed() - before;
  // Read after the measurement, so what is kept is alive when it is measured.
  if (kept.size() !== count) throw new Error('kept ' + kept.size() + ' of ' + count);
  return used / count;
}

const whole = await measure((texts) => {
  const map = new Map();
  for (const text of texts) { const raw = JSON.parse(text); map.set(raw.metadata.name, parseSandbox(raw)); }
  return { size: () => map.size };
});
const state = await measure((texts) => {
  const store = new ClusterStore(() => undefined);
  for (const text of texts) store.sandboxSink.apply('ADDED', store.sandboxSink.decode(JSON.parse(text)));
  return { size: () => store.counts.sandboxes };
});
process.stdout.write(JSON.stringify({ whole, state }));
`;

function run(bundle: string, shape: (typeof SHAPES)[number]): Promise<{ whole: number; state: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '--max-old-space-size=2048'], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_SANDBOX_SHAPE: JSON.stringify(shape) },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as { whole: number; state: number })
        : reject(new Error(`the sandbox-cache measurement exited ${String(code)}`)),
    );
    child.stdin.end(bundle);
  });
}

const bytes = (value: number) =>
  value >= 1024 * 1024 ? `${(value / 1024 / 1024).toFixed(2)} MiB` : `${Math.round(value)} B`;

export async function sandboxCacheBenchmarks(): Promise<void> {
  heading('Bytes per cached Sandbox, compiled (issue 26, #5): parsed whole (before) vs its state (now)');
  const bundle = await bundleScript(SCRIPT);
  for (const shape of SHAPES) {
    const { whole, state } = await run(bundle, shape);
    figure(`${shape.name} (${shape.count}): whole`, bytes(whole), 'per Sandbox (baseline)');
    figure(`${shape.name} (${shape.count}): state`, bytes(state), 'per Sandbox');
    figure(`${shape.name}: baseline / state`, `${(whole / state).toFixed(1)}x`, 'smaller now');
  }
}
