/**
 * Drains that finish (issue 27): a sandbox whose disruption policy is Reschedule, on a node being drained, is
 * moved by the operator — its eviction still refused, the Disrupting condition and an Event first, the move
 * held while an attached session has a turn Running (at most holdSeconds), then its pod deleted by the
 * operator and created again, which the scheduler places on the other node. The test has its own two kwok
 * nodes and its own scheduler (by name), so no other test's pods are touched.
 */
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, inject } from 'vitest';
import { GROUP, LABELS, SANDBOX, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import { kubectl, testNamespace } from '../../harness/kube.ts';
import { startTestScheduler, type TestScheduler } from '../../harness/scheduler.ts';
import { createReference, getReference, getSandbox, sandboxManifest, untilSandbox } from './fixtures.ts';
import {
  core,
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const local = inject('clusterKind') === 'local';
const namespace = testNamespace('reschedule');
const group = `reschedule-${process.pid}`;
const nodes = [`${group}-a`, `${group}-b`];
let operator: RunningOperator | undefined;
let scheduler: TestScheduler | undefined;

async function createMovable(name: string, holdSeconds: number): Promise<void> {
  const manifest = sandboxManifest(namespace, name, { worktree: 'wt-1', onNode: false });
  const spec = manifest.spec.podTemplate.spec;
  const body = {
    ...manifest,
    spec: {
      ...manifest.spec,
      // A persistent workspace: its pods may move, so the policy defaults to Reschedule.
      volumeClaimTemplates: [
        {
          metadata: { name: 'workspace' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
      disruption: { holdSeconds },
      podTemplate: {
        spec: {
          ...spec,
          schedulerName: group,
          nodeSelector: { [group]: 'yes' },
          tolerations: [{ key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' }],
        },
      },
    },
  };
  await customObjects().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX.plural,
    body,
  });
  await untilSandbox(namespace, name, 'pod running', (sandbox) => sandbox.status?.phase === 'Running');
}

async function podOf(sandbox: string): Promise<V1Pod | undefined> {
  const list = await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` });
  return list.items.find((pod) => pod.metadata?.deletionTimestamp === undefined);
}

async function runningPod(sandbox: string): Promise<{ uid: string; node: string }> {
  return eventually(`a running pod of ${sandbox}`, async () => {
    const pod = await podOf(sandbox);
    const uid = pod?.metadata?.uid ?? '';
    const node = pod?.spec?.nodeName ?? '';
    return pod?.status?.phase === 'Running' && node !== '' ? { uid, node } : pending({ pod: pod?.status });
  });
}

const condition = async (sandbox: string, type: string) =>
  (await getSandbox(namespace, sandbox))?.status?.conditions?.find((c) => c.type === type);

async function eventsOf(sandbox: string, reason: string) {
  const list = await core().listNamespacedEvent({
    namespace,
    fieldSelector: `involvedObject.name=${sandbox},reason=${reason}`,
  });
  return list.items;
}

async function setTurn(reference: string, phase: 'Running' | 'Completed'): Promise<void> {
  await customObjects().patchNamespacedCustomObjectStatus(
    {
      group: GROUP,
      version: VERSION,
      namespace,
      plural: SESSION_REFERENCE.plural,
      name: reference,
      body: { status: { turn: { id: 'turn-1', phase } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

beforeAll(async () => {
  if (!local) return;
  for (const node of nodes)
    await core().createNode({
      body: {
        metadata: { name: node, labels: { 'kubernetes.io/hostname': node, type: 'kwok', [group]: 'yes' } },
        spec: { taints: [{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }] },
      },
    });
  scheduler = await startTestScheduler(inject('kubeconfig'), group);
  await grantOperatorRbac();
  operator = startOperator(namespace);
}, 120_000);

// A failed test must not leave its node cordoned for the next one.
afterEach(async () => {
  if (local) for (const node of nodes) await kubectl(['uncordon', node]);
});

afterAll(async () => {
  await operator?.stop();
  await scheduler?.stop();
  if (!local) return;
  for (const node of nodes) await kubectl(['delete', 'node', node, '--wait=false']);
});

describe.skipIf(!local)('a sandbox whose disruption policy is Reschedule, on a node being drained', () => {
  it('lets kubectl drain finish: moves at once when no turn is Running, telling first, its eviction refused', async () => {
    await createMovable('mover', 300);
    const before = await runningPod('mover');
    expect(await condition('mover', 'Disrupting')).toMatchObject({ status: 'False', reason: 'NoDrain' });
    const eviction = await core()
      .createNamespacedPodEviction({
        name: 'mover-0',
        namespace,
        body: { metadata: { name: 'mover-0', namespace } },
      })
      .then(
        () => 'evicted',
        (error: unknown) => (error as { code?: number }).code,
      );
    expect(eviction).toBe(429);

    // kubectl drain cordons, then retries the refused eviction until the pod is gone: the operator's move.
    const drain = await kubectl(['drain', before.node, '--ignore-daemonsets', '--timeout=90s']);
    expect(drain, `kubectl drain: ${drain.stderr}`).toMatchObject({ exitCode: 0 });
    expect(drain.stdout).toContain(`node/${before.node} drained`);
    const after = await eventually('the pod running on the other node', async () => {
      const seen = await runningPod('mover');
      return seen.uid !== before.uid ? seen : pending({ seen });
    });
    expect(after.node).toBe(nodes.find((node) => node !== before.node));
    const [told] = await eventsOf('mover', 'DrainRescheduling');
    expect(told).toMatchObject({ type: 'Normal' });
    expect(told?.message).toContain(`node ${before.node} (Cordoned) being drained; pod mover-0 moves`);
    const [moved] = await eventsOf('mover', 'PodRescheduled');
    expect(moved?.message).toBe(
      `deleted pod mover-0 on node ${before.node} (Cordoned, being drained) to move it: no attached session ` +
        'has a turn Running; its replacement is created on another node',
    );
    await eventually('Disrupting False once the pod has moved', async () => {
      const seen = await condition('mover', 'Disrupting');
      return seen?.status === 'False' ? true : pending({ seen });
    });
    expect(await condition('mover', 'DisruptionBlocked')).toMatchObject({ status: 'False' });
  });

  it('holds the move while an attached turn is Running, telling the sessions, and moves once it ends', async () => {
    await createMovable('busy', 300);
    await createReference(namespace, 'busy-ref', {
      sandbox: 'busy',
      session: 'workspace_busy',
      worktree: 'wt-1',
    });
    await createReference(namespace, 'busy-tombstone', {
      sandbox: 'busy',
      session: 'workspace_gone',
      worktree: 'wt-1',
      state: 'Detached',
    });
    await setTurn('busy-ref', 'Running');
    const before = await runningPod('busy');
    expect((await getReference(namespace, 'busy-ref'))?.status?.disruption).toBeUndefined();
    expect((await kubectl(['cordon', before.node])).exitCode).toBe(0);
    const disrupting = await eventually('Disrupting True', async () => {
      const seen = await condition('busy', 'Disrupting');
      return seen?.status === 'True' ? seen : pending({ seen });
    });
    expect(disrupting.message).toMatch(/once no attached session has a turn Running, at the latest at /);
    // The attached session is told on its reference (the agent host reads it there); the tombstone is not.
    // (The drain's first turn may read the clock a second before its status does; the next turn agrees.)
    const since = disrupting.lastTransitionTime;
    const told = await eventually('the attached reference told of the drain', async () => {
      const seen = (await getReference(namespace, 'busy-ref'))?.status;
      return seen?.disruption?.since === since ? seen : pending({ seen, since });
    });
    expect(told.disruption).toEqual({
      nodes: [before.node],
      since,
      movesBy: new Date(Date.parse(since) + 300_000).toISOString().replace('.000Z', 'Z'),
    });
    expect(told.turn).toMatchObject({ id: 'turn-1', phase: 'Running' });
    expect((await getReference(namespace, 'busy-tombstone'))?.status?.disruption).toBeUndefined();
    // Held: a few resyncs' worth of turns, and the pod is the same, the notice still there.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await runningPod('busy')).uid).toBe(before.uid);
    expect(await eventsOf('busy', 'PodRescheduled')).toHaveLength(0);
    expect((await getReference(namespace, 'busy-ref'))?.status?.disruption).toEqual(told.disruption);

    await setTurn('busy-ref', 'Completed');
    const after = await eventually('the pod moved once the turn ended', async () => {
      const seen = await runningPod('busy');
      return seen.uid !== before.uid ? seen : pending({ seen });
    });
    expect(after.node).not.toBe(before.node);
    // Once the replacement exists the notice goes; the session's own status stays.
    const cleared = await eventually('the notice removed after the move', async () => {
      const seen = (await getReference(namespace, 'busy-ref'))?.status;
      return seen?.disruption === undefined ? seen : pending({ seen });
    });
    expect(cleared.turn).toMatchObject({ id: 'turn-1', phase: 'Completed' });
  });

  it('moves when the hold ends, even with a turn still Running', async () => {
    await createMovable('stubborn', 3);
    await createReference(namespace, 'stubborn-ref', {
      sandbox: 'stubborn',
      session: 'workspace_stubborn',
      worktree: 'wt-1',
    });
    await setTurn('stubborn-ref', 'Running');
    const before = await runningPod('stubborn');
    expect((await kubectl(['cordon', before.node])).exitCode).toBe(0);
    const after = await eventually('the pod moved once the hold ended', async () => {
      const seen = await runningPod('stubborn');
      return seen.uid !== before.uid ? seen : pending({ seen });
    });
    expect(after.node).not.toBe(before.node);
    const [moved] = await eventsOf('stubborn', 'PodRescheduled');
    expect(moved?.message).toContain('the hold ended with turns still Running');
  });
});
