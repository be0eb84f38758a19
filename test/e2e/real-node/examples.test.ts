// Every example of examples/, as a new user applies it under `npm start` on a machine that runs the real node
// (untainted there): each file in a namespace of its own, so none leans on what another carries (the shell
// reaper's ServiceAccount), applied with the command its header prints, and every Sandbox in it Ready, its
// pods running as real containers. Applied again, as a GitOps engine does on every sync, it changes nothing.
// The image the examples name is what a real cluster would pull; here it is a local stand-in, and says so.
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { endLeftoverGroups, spawnGroup } from '../../harness/process-groups.ts';
import { parseAllDocuments } from 'yaml';
import { runKubectl } from '@sandbox-operator/local-cluster';
import { eventually, pending } from '../../integration/controller/operator.ts';
import { requireRealNode } from './node.ts';

const EXAMPLES = readdirSync('examples')
  .filter((file) => file.endsWith('.yaml'))
  .sort();

interface Example {
  readonly file: string;
  readonly namespace: string;
  readonly sandboxes: readonly string[];
  /** Warm pools (issue 28), and their replicas. */
  readonly pools: readonly { readonly name: string; readonly replicas: number }[];
  readonly claims: readonly string[];
}

type Doc = {
  kind?: string;
  metadata?: { name?: string };
  spec?: { replicas?: number; warmPoolRef?: { name?: string } };
};
const docsOf = (file: string) =>
  parseAllDocuments(readFileSync(`examples/${file}`, 'utf8')).map((doc) => doc.toJS() as Doc);
const namesOf = (docs: readonly Doc[], kind: string) =>
  docs.filter((doc) => doc.kind === kind).map((doc) => doc.metadata?.name ?? '');
const namespaceOf = (file: string) => `ex-${file.replace(/\.yaml$/, '')}`;

/** A claim is applied beside the pool it names, as a user would: a pool serves claims of its namespace. */
function example(file: string): Example {
  const docs = docsOf(file);
  const pool = docs.find((doc) => doc.kind === 'SandboxClaim')?.spec?.warmPoolRef?.name;
  const home = EXAMPLES.find(
    (other) => pool !== undefined && namesOf(docsOf(other), 'SandboxWarmPool').includes(pool),
  );
  return {
    file,
    namespace: namespaceOf(home ?? file),
    sandboxes: namesOf(docs, 'Sandbox'),
    pools: docs
      .filter((doc) => doc.kind === 'SandboxWarmPool')
      .map((doc) => ({ name: doc.metadata?.name ?? '', replicas: doc.spec?.replicas ?? 1 })),
    claims: namesOf(docs, 'SandboxClaim'),
  };
}

type Item = { metadata: { name: string; generation?: number }; status?: Record<string, unknown> };
type Condition = { type: string; status: string; reason?: string; message?: string };

/** What a user would look at while waiting: each Sandbox's Ready, each pod's container states. */
function seen(sandboxes: Item[], pods: Item[]): object {
  return {
    sandboxes: sandboxes.map((s) => ({
      name: s.metadata.name,
      ready: (s.status?.['conditions'] as Condition[] | undefined)?.find((c) => c.type === 'Ready'),
    })),
    pods: pods.map((p) => ({
      name: p.metadata.name,
      phase: p.status?.['phase'],
      containers: (
        (p.status?.['containerStatuses'] ?? []) as { name: string; state?: Record<string, unknown> }[]
      ).map((c) => ({ name: c.name, state: c.state })),
    })),
  };
}

// A test that timed out never ran its own finally: end what it started before the next one starts.
afterEach(async () => {
  await endLeftoverGroups();
}, 60_000);

describe.runIf(inject('clusterKind') === 'local')('the examples under npm start with a real node', () => {
  // The banner may wait for the operator image's first build (minutes, cold); then each example's pods start.
  it('every example becomes Ready, and re-applying it changes nothing', { timeout: 900_000 }, async (ctx) => {
    requireRealNode(ctx);
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(4);
    // Ports of its own: another operator on this machine (a test's npm start) must not keep this one from starting.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SANDBOX_OPERATOR_PROBE_BIND: '127.0.0.1:0',
      SANDBOX_OPERATOR_METRICS_BIND: '127.0.0.1:0',
    };
    delete env['KUBECONFIG'];
    delete env['KUBERNETES_SERVICE_HOST'];
    const child = spawnGroup('npm', ['start'], { env });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'exit');
    // Also when the test times out: npm start and its control plane never outlive it.
    ctx.onTestFinished(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(-(child.pid ?? 0), 'SIGINT');
      const stopped = await Promise.race([
        exited.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 90_000)),
      ]);
      // Still there: the group goes; the local control plane's watchdog removes what it started.
      if (!stopped) process.kill(-(child.pid ?? 0), 'SIGKILL');
    }, 120_000);
    const kubeconfig = await eventually(
      'the banner',
      () => {
        if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output.slice(-3000)}`);
        return Promise.resolve(/export KUBECONFIG=(\S+)/.exec(output)?.[1]);
      },
      300_000,
    );
    expect(output).toContain('Sandbox pods run as real containers on node 127.0.0.1');
    expect(output).toContain(
      "The examples' image ghcr.io/agent-platform/agent-runtime:1.8.2 is a local stand-in on that node",
    );
    const kubectl = (args: string[]) => runKubectl(inject('kubectl'), kubeconfig, args);
    const ok = async (args: string[]) => {
      const result = await kubectl(args);
      expect(result.exitCode, `kubectl ${args.join(' ')}: ${result.stderr}`).toBe(0);
      return result.stdout;
    };
    const examples = EXAMPLES.map(example);
    for (const { file, namespace } of examples) {
      // The command the example's header prints, in a namespace of its own.
      expect(readFileSync(`examples/${file}`, 'utf8')).toContain(
        `kubectl apply --server-side -n team-a -f examples/${file}`,
      );
      if ((await kubectl(['get', 'namespace', namespace])).exitCode !== 0)
        await ok(['create', 'namespace', namespace]);
      await ok(['apply', '--server-side', '-n', namespace, '-f', `examples/${file}`]);
    }
    // The pool first (filled), then its claims (bound: Ready), then the pool again (refilled), so the re-apply
    // below finds nothing moving.
    const waitPools = async (pools: Example['pools'], namespace: string) => {
      for (const { name, replicas } of pools)
        await ok([
          'wait',
          `--for=jsonpath={.status.readyReplicas}=${replicas}`,
          `sbwp/${name}`,
          '-n',
          namespace,
          '--timeout=300s',
        ]);
    };
    for (const { file, namespace, sandboxes, pools, claims } of examples) {
      expect(sandboxes.length + pools.length + claims.length, file).toBeGreaterThan(0);
      await waitPools(pools, namespace);
      for (const claim of claims)
        await ok(['wait', '--for=condition=Ready', `sbc/${claim}`, '-n', namespace, '--timeout=180s']);
    }
    for (const { pools, namespace } of examples) await waitPools(pools, namespace);
    for (const { file, namespace, sandboxes } of examples) {
      if (sandboxes.length === 0) continue;
      await eventually(
        `every Sandbox of ${file} Ready`,
        async () => {
          const list = async (kind: string) =>
            (JSON.parse(await ok(['get', kind, '-n', namespace, '-o', 'json'])) as { items: Item[] }).items;
          const [found, pods] = [await list('sbx'), await list('pods')];
          const ready = found.filter((s) =>
            (s.status?.['conditions'] as Condition[] | undefined)?.some(
              (c) => c.type === 'Ready' && c.status === 'True',
            ),
          );
          return ready.length === sandboxes.length ? true : pending(seen(found, pods));
        },
        240_000,
      );
      // What README.md tells a user to run after applying one.
      await ok(['wait', '--for=condition=Ready', 'sbx', '--all', '-n', namespace, '--timeout=180s']);
    }
    for (const { file, namespace } of examples) {
      const generations = await ok([
        'get',
        'sbx',
        '-n',
        namespace,
        '-o',
        'jsonpath={.items[*].metadata.generation}',
      ]);
      const again = await ok(['apply', '--server-side', '-n', namespace, '-f', `examples/${file}`]);
      expect(
        again
          .trim()
          .split('\n')
          .every((line) => line.endsWith(' serverside-applied')),
        again,
      ).toBe(true);
      // What a GitOps engine's drift detection asks: the live objects are what the file says.
      const diff = await kubectl(['diff', '--server-side', '-n', namespace, '-f', `examples/${file}`]);
      expect({ file, code: diff.exitCode, diff: diff.stdout, stderr: diff.stderr }).toMatchObject({
        file,
        code: 0,
      });
      expect(
        await ok(['get', 'sbx', '-n', namespace, '-o', 'jsonpath={.items[*].metadata.generation}']),
      ).toBe(generations);
    }
    // The agent runtime the examples name is a stand-in on this node, and its log says so.
    const shared = examples.find((e) => e.file === 'shared-sandbox.yaml');
    expect(shared).toBeDefined();
    // Read until the kubelet serves the first line (once seen empty under load: the CI of 35ad312).
    const log = await eventually(
      'the stand-in’s first log line',
      async () => {
        const text = await ok(['logs', '-n', shared?.namespace ?? '', 'shared-login-0', '-c', 'workspace']);
        return text.includes('stand-in') ? text : pending(text);
      },
      30_000,
    );
    expect(log).toContain('stand-in');
    expect(log).toContain('not ghcr.io/agent-platform/agent-runtime:1.8.2');
  });
});
