/**
 * Health as GitOps engines compute it, by their own code, of what the API server serves (docs/health.md):
 * kstatus (sigs.k8s.io/cli-utils: Flux's wait and health checks, kpt) and Argo CD's Lua health checks
 * (operator/api/health/argocd, in gopher-lua). Every example in examples/, applied server-side as Flux does:
 * not yet observed before the operator's first status, InProgress while its pods come up, Current once a
 * scheduler's binding puts them on a kwok node (which marks them Ready, as a kubelet would: the examples'
 * images are never pulled here), and a blocked deletion. Stalled (Misconfigured) is read in
 * test/integration/controller/misconfiguration.test.ts, where a refusal is met for real.
 */
import { Watch } from '@kubernetes/client-node';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import { GROUP, LABELS, SANDBOX, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import { argoCdHealthOf, ensureHealthCheckers, kstatusOf } from '../../harness/health-checks.ts';
import { kubeConfig, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { getSandbox, sandboxGone } from '../controller/fixtures.ts';
import {
  core,
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from '../controller/operator.ts';

const namespace = testNamespace('health');
const EXAMPLES = 'examples';
/** Flux's server-side apply field manager. */
const MANAGER = 'kustomize-controller';
const OURS = new Set<string>([SANDBOX.kind, SESSION_REFERENCE.kind]);
let operator: RunningOperator | undefined;

type Condition = { type: string; status: string; reason: string; message: string };
type Live = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; generation?: number; deletionTimestamp?: string };
  spec: { replicas?: number };
  status?: { observedGeneration?: number; pods?: { total: number }; conditions?: Condition[] };
};

/**
 * The examples of Sandboxes and references. A warm pool (and a claim on it) fills the namespace with its own
 * sandboxes and pods, which this test's counts do not expect: test/e2e/real-node/examples.test.ts applies
 * those, and re-applies them with a clean server-side diff.
 */
const exampleFiles = async () => {
  const files = (await readdir(EXAMPLES))
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => join(EXAMPLES, file));
  const pooled = await Promise.all(
    files.map(async (file) => /^kind: (SandboxWarmPool|SandboxClaim)$/m.test(await readFile(file, 'utf8'))),
  );
  return files.filter((_, i) => !pooled[i]);
};

/** Our objects in the examples, by kind and name. */
async function exampleObjects(): Promise<{ kind: string; name: string }[]> {
  const objects: { kind: string; name: string }[] = [];
  for (const file of await exampleFiles())
    for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
      const object = doc.toJS() as { kind: string; metadata: { name: string } };
      if (OURS.has(object.kind)) objects.push({ kind: object.kind, name: object.metadata.name });
    }
  return objects;
}

const applyExamples = async () =>
  kubectlOk([
    'apply',
    '--server-side',
    `--field-manager=${MANAGER}`,
    '-n',
    namespace,
    '-o',
    'json',
    ...(await exampleFiles()).flatMap((file) => ['-f', file]),
  ]);

async function live(): Promise<Live[]> {
  const list = await kubectlOk([
    'get',
    'sandboxes.sandbox.agents.dev,sessionreferences.sandbox.agents.dev',
    '-n',
    namespace,
    '-o',
    'json',
  ]);
  return (JSON.parse(list) as { items: Live[] }).items;
}

/** Each object with what kstatus and Argo CD say of it. */
async function health(objects: readonly Live[]) {
  const kstatus = await kstatusOf(objects);
  const ofKind = (kind: typeof SANDBOX.kind | typeof SESSION_REFERENCE.kind) =>
    argoCdHealthOf(
      kind,
      objects.filter((o) => o.kind === kind),
    );
  const [forSandboxes, forReferences] = await Promise.all([
    ofKind(SANDBOX.kind),
    ofKind(SESSION_REFERENCE.kind),
  ]);
  let [s, r] = [0, 0];
  return objects.map((object, i) => ({
    what: `${object.kind} ${object.metadata.name}`,
    kstatus: kstatus[i],
    argo: object.kind === SANDBOX.kind ? forSandboxes[s++] : forReferences[r++],
    object,
  }));
}

const getLive = async (name: string) => (await getSandbox(namespace, name)) as unknown as Live | undefined;
const condition = (object: Live, type: string) => object.status?.conditions?.find((c) => c.type === type);
const sandboxes = (objects: Live[]) => objects.filter((o) => o.kind === SANDBOX.kind);

beforeAll(async () => {
  await grantOperatorRbac();
  await ensureHealthCheckers();
});
afterAll(async () => {
  await operator?.stop();
});

describe.skipIf(inject('clusterKind') !== 'local')(
  'health of the examples, as GitOps engines read it',
  () => {
    it('is not yet observed from the create on, in every read, until the operator writes its first status', async () => {
      // A watch from before the apply sees the ADDED event as an informer (Flux's, Argo CD's) does.
      const added: Live[] = [];
      const watch = await new Watch(kubeConfig()).watch(
        `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${SANDBOX.plural}`,
        {},
        (type: string, object: Live) => {
          if (type === 'ADDED') added.push(object);
        },
        () => undefined,
      );
      let applied: Live[];
      try {
        // No operator runs yet: the examples are exactly as the API server serves a Sandbox nobody observed.
        const answer = JSON.parse(await applyExamples()) as { items?: Live[] } & Live;
        applied = answer.items ?? [answer];
        const names = (await exampleObjects()).filter((o) => o.kind === SANDBOX.kind).map((o) => o.name);
        expect(names.length).toBeGreaterThan(0);
        await eventually('an ADDED event per Sandbox', () =>
          Promise.resolve(added.length >= names.length ? added : pending({ added: added.length })),
        );
      } finally {
        watch.abort();
      }
      const got = sandboxes(await live());
      for (const [read, objects] of [
        ['the apply answer', sandboxes(applied)],
        ['the watch', added],
        ['a LIST', got],
        ['a GET', await Promise.all(got.map((s) => getLive(s.metadata.name)))],
      ] as const) {
        expect(objects.length, read).toBe(got.length);
        for (const object of objects)
          expect(object?.status, `${read}: ${object?.metadata.name}`).toEqual({ observedGeneration: 0 });
      }
      for (const { what, kstatus, argo, object } of await health(got)) {
        expect(kstatus, what).toEqual({
          status: 'InProgress',
          message: `Sandbox generation is ${object.metadata.generation}, but latest observed generation is 0`,
        });
        expect(argo, what).toEqual({
          status: 'Progressing',
          message: `Waiting for the operator to observe generation ${object.metadata.generation}`,
        });
      }
    });

    it('is InProgress while the pods come up: the operator has observed them, its pods are not ready', async () => {
      operator = startOperator(namespace);
      const objects = await eventually('every sandbox observed, its pods created, none ready', async () => {
        const current = await live();
        const seen = sandboxes(current).map((s) => ({
          name: s.metadata.name,
          observed: s.status?.observedGeneration === s.metadata.generation,
          pods: s.status?.pods?.total,
          ready: condition(s, 'Ready')?.status,
        }));
        return seen.every((s) => s.observed && s.pods === 1 && s.ready === 'False') ? current : pending(seen);
      });
      for (const { what, kstatus, argo, object } of await health(objects)) {
        if (object.kind === SESSION_REFERENCE.kind) {
          // A record, not something reconciled towards a desired state: there is nothing to wait for.
          expect(kstatus, what).toEqual({ status: 'Current', message: 'Resource is current' });
          expect(argo?.status, what).toBe('Healthy');
          continue;
        }
        expect(condition(object, 'Reconciling'), what).toMatchObject({
          status: 'True',
          reason: 'PodsNotReady',
        });
        expect(condition(object, 'Stalled'), what).toMatchObject({ status: 'False' });
        expect(kstatus, what).toEqual({ status: 'InProgress', message: '0/1 pods ready' });
        expect(argo, what).toEqual({ status: 'Progressing', message: '0/1 pods ready' });
      }
    });

    it('is Current (Healthy to Argo CD) once the pods are placed and ready', async () => {
      // No scheduler places these pods here (every node is tainted): bind them as a scheduler would.
      const pods = await core().listNamespacedPod({ namespace, labelSelector: LABELS.sandbox });
      expect(pods.items.length).toBe((await exampleObjects()).filter((o) => o.kind === SANDBOX.kind).length);
      for (const pod of pods.items)
        if (pod.spec?.nodeName === undefined)
          await core().createNamespacedPodBinding({
            namespace,
            name: pod.metadata!.name!,
            body: {
              metadata: { name: pod.metadata!.name! },
              target: { kind: 'Node', name: kwokNodeName(0) },
            },
          });
      const settled = await eventually(
        'every example Current',
        async () => {
          const verdicts = await health(await live());
          return verdicts.every((v) => v.kstatus?.status === 'Current')
            ? verdicts
            : pending(verdicts.map((v) => `${v.what}: ${v.kstatus?.status} ${v.kstatus?.message ?? ''}`));
        },
        60_000,
      );
      expect(settled.length).toBe((await exampleObjects()).length);
      for (const { what, kstatus, argo, object } of settled) {
        if (object.kind === SESSION_REFERENCE.kind) {
          expect(argo?.status, what).toBe('Healthy');
          continue;
        }
        expect(kstatus, what).toEqual({ status: 'Current', message: 'Resource is Ready' });
        expect(argo, what).toEqual({ status: 'Healthy', message: '1/1 pods ready' });
        expect(condition(object, 'Reconciling'), what).toMatchObject({ status: 'False' });
      }
    });

    it('is Terminating to kstatus and Progressing to Argo CD while a deletion is blocked, then gone', async () => {
      await customObjects().deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        name: 'shared-login',
      });
      const blocked = await eventually('shared-login blocked', async () => {
        const sandbox = await getLive('shared-login');
        return sandbox && condition(sandbox, 'DeletionBlocked')?.status === 'True'
          ? sandbox
          : pending(sandbox?.status?.conditions);
      });
      expect(condition(blocked, 'Reconciling')).toMatchObject({
        status: 'True',
        reason: 'DeletionBlocked',
        message: expect.stringContaining('board-main'),
      });
      const [verdict] = await health([blocked]);
      // kstatus's first rule: any object with a deletionTimestamp is Terminating, until it is gone (NotFound).
      expect(verdict?.kstatus).toEqual({ status: 'Terminating', message: 'Resource scheduled for deletion' });
      expect(verdict?.argo).toEqual({
        status: 'Progressing',
        message: expect.stringMatching(/^the deletion waits: .*blocking: board-main/),
      });
      await customObjects().deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SESSION_REFERENCE.plural,
        name: 'board-main',
      });
      await sandboxGone(namespace, 'shared-login');
    });
  },
);
