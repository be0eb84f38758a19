/**
 * Suspend and resume against the real API server with the operator running (issue 27): a suspension deletes
 * the pods and keeps the Sandbox, its references, its finalizer and its eviction guard; running again creates
 * the pods under the same names; idleness by references suspends by itself and an attach resumes; a suspended
 * sandbox's deletion goes through the ordinary decision.
 */
import { PatchStrategy, PolicyV1Api, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EXCLUSIVITY_FINALIZER,
  GROUP,
  LABELS,
  SANDBOX,
  SESSION_REFERENCE,
  VERSION,
} from '../../../operator/api/names.ts';
import { disruptionBudgetName } from '../../../operator/controller/cache/budget-summary.ts';
import type { Sandbox } from '../../../operator/api/objects.ts';
import { SessionReferences } from '../../../operator/client/session-references.ts';
import { SandboxNotReadyError } from '../../../operator/client/resumption.ts';
import { sessionReferenceName } from '../../../operator/client/names.ts';
import { kubeConfig, testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteReference,
  deleteSandbox,
  getReference,
  sandboxGone,
  untilSandbox,
} from './fixtures.ts';
import {
  core,
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('suspend');
let operator: RunningOperator;

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator.stop();
});

const EPHEMERAL = { workspace: 'Ephemeral' };

const podsOf = async (sandbox: string): Promise<V1Pod[]> =>
  (await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` })).items;

async function untilPods(sandbox: string, what: string, wanted: (pods: V1Pod[]) => boolean) {
  return eventually(what, async () => {
    const pods = await podsOf(sandbox);
    return wanted(pods)
      ? pods
      : pending({ pods: pods.map((p) => `${p.metadata?.name ?? ''} ${p.status?.phase ?? ''}`) });
  });
}

async function setOperatingMode(name: string, operatingMode: 'Running' | 'Suspended'): Promise<void> {
  await customObjects().patchNamespacedCustomObject(
    {
      group: GROUP,
      version: VERSION,
      namespace,
      plural: SANDBOX.plural,
      name,
      body: { spec: { operatingMode } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function eventsOf(name: string, reason: string) {
  return eventually(`the ${reason} Event of ${name}`, async () => {
    const list = await core().listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.name=${name},reason=${reason}`,
    });
    return list.items.length > 0 ? list.items : pending({ events: 0 });
  });
}

const condition = (sandbox: Pick<Sandbox, 'status'>, type: string) =>
  sandbox.status?.conditions?.find((c) => c.type === type);

const running = (name: string) =>
  untilSandbox(namespace, name, `${name} running`, (sandbox) => sandbox.status?.phase === 'Running');

async function budgetOf(sandbox: string) {
  return kubeConfig()
    .makeApiClient(PolicyV1Api)
    .readNamespacedPodDisruptionBudget({
      name: disruptionBudgetName(sandbox),
      namespace,
    });
}

describe('a suspended sandbox', () => {
  it('loses its pods and keeps its Sandbox, references, finalizer and guard; running again, its pods return', async () => {
    await createSandbox(namespace, 'paused', { worktree: 'wt-1', replicas: 2, suspension: EPHEMERAL });
    await createReference(namespace, 'paused-own', {
      sandbox: 'paused',
      session: 'workspace_1',
      worktree: 'wt-1',
    });
    await running('paused');
    const before = await podsOf('paused');
    expect(before.map((p) => p.metadata?.name).sort()).toEqual(['paused-0', 'paused-1']);

    await setOperatingMode('paused', 'Suspended');
    await untilPods('paused', 'pods gone', (pods) => pods.length === 0);
    const suspended = await untilSandbox(
      namespace,
      'paused',
      'suspended, its pods gone',
      (sandbox) => sandbox.status?.phase === 'Suspended' && sandbox.status.pods?.total === 0,
    );
    expect(condition(suspended, 'Suspended')).toMatchObject({ status: 'True', reason: 'Requested' });
    expect(condition(suspended, 'Ready')).toMatchObject({ status: 'False', reason: 'Suspended' });
    expect(condition(suspended, 'Reconciling')).toMatchObject({ status: 'False' });
    expect(suspended.metadata.finalizers).toContain(EXCLUSIVITY_FINALIZER);
    expect(await getReference(namespace, 'paused-own')).toMatchObject({ spec: { state: 'Attached' } });
    expect((await budgetOf('paused')).spec?.maxUnavailable).toBe(0);
    const [suspendedEvent] = await eventsOf('paused', 'Suspended');
    expect(suspendedEvent).toMatchObject({ type: 'Normal' });
    expect(suspendedEvent?.message).toContain('spec.operatingMode is Suspended');
    // It stays suspended: no pod is created while it is (a resync later, still none).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await podsOf('paused')).toHaveLength(0);

    await setOperatingMode('paused', 'Running');
    const after = await untilPods('paused', 'pods back', (pods) => pods.length === 2);
    expect(after.map((p) => p.metadata?.name).sort()).toEqual(['paused-0', 'paused-1']);
    expect(after.every((p) => p.metadata?.finalizers?.includes(EXCLUSIVITY_FINALIZER))).toBe(true);
    const resumed = await running('paused');
    expect(condition(resumed, 'Suspended')).toMatchObject({ status: 'False', reason: 'Running' });
    await eventsOf('paused', 'Resumed');
  });

  it('goes through the ordinary decision when deleted: blocked by a foreign tombstone, gone once it is forgotten', async () => {
    await createSandbox(namespace, 'paused-shared', { worktree: 'wt-1', suspension: EPHEMERAL });
    await createReference(namespace, 'paused-foreign', {
      sandbox: 'paused-shared',
      session: 'workspace_2',
      worktree: 'wt-2',
      state: 'Detached',
    });
    await running('paused-shared');
    await setOperatingMode('paused-shared', 'Suspended');
    await untilPods('paused-shared', 'pods gone', (pods) => pods.length === 0);
    await deleteSandbox(namespace, 'paused-shared');
    const blocked = await untilSandbox(
      namespace,
      'paused-shared',
      'deletion blocked',
      (sandbox) => sandbox.status?.phase === 'Blocked',
    );
    expect(blocked.status?.decision).toMatchObject({
      verdict: 'Foreign',
      blockingReferences: ['paused-foreign'],
    });
    expect(await podsOf('paused-shared')).toHaveLength(0);
    await deleteReference(namespace, 'paused-foreign');
    await sandboxGone(namespace, 'paused-shared');
  });
});

describe('a sandbox idle by references', () => {
  it('is suspended once no reference has been Attached for suspendAfterSeconds, and an attach resumes it', async () => {
    await createSandbox(namespace, 'idler', {
      worktree: 'wt-1',
      suspension: { ...EPHEMERAL, idle: { suspendAfterSeconds: 5 } },
    });
    await createReference(namespace, 'idler-gone', {
      sandbox: 'idler',
      session: 'workspace_3',
      worktree: 'wt-1',
      state: 'Detached',
    });
    const idle = await running('idler');
    const since = Date.parse(
      (await untilSandbox(namespace, 'idler', 'idle clock', (s) => s.status?.idleSince !== undefined)).status
        ?.idleSince ?? '',
    );
    expect(condition(idle, 'Suspended')).toMatchObject({ status: 'False' });

    const suspended = await untilSandbox(
      namespace,
      'idler',
      'suspended as idle',
      (sandbox) => sandbox.status?.phase === 'Suspended' && sandbox.status.pods?.total === 0,
      30_000,
    );
    // Not before its time: the condition turned True suspendAfterSeconds after the clock started, or later.
    const turned = condition(suspended, 'Suspended');
    expect(turned?.reason).toBe('Idle');
    expect(Date.parse(turned?.lastTransitionTime ?? '')).toBeGreaterThanOrEqual(since + 5000);
    expect(await podsOf('idler')).toHaveLength(0);
    expect(await getReference(namespace, 'idler-gone')).toBeDefined();

    await createReference(namespace, 'idler-back', {
      sandbox: 'idler',
      session: 'workspace_4',
      worktree: 'wt-1',
    });
    await untilPods('idler', 'its pod back', (pods) => pods.length === 1);
    const resumed = await running('idler');
    expect(resumed.status?.idleSince).toBeUndefined();
    expect(condition(resumed, 'Suspended')).toMatchObject({ status: 'False' });
  });
});

describe('a sandbox idle when no turn is running', () => {
  async function setTurn(name: string, phase: 'Running' | 'Completed') {
    await customObjects().patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SESSION_REFERENCE.plural,
        name,
        body: { status: { turn: { id: `t-${phase}`, phase, origin: 'ParentMessage' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  it('runs while an attached session has a turn Running, suspends after it ends, resumes when one starts', async () => {
    await createSandbox(namespace, 'turner', {
      worktree: 'wt-1',
      suspension: { ...EPHEMERAL, idle: { suspendAfterSeconds: 5, whenNoTurnRunning: true } },
    });
    await createReference(namespace, 'turner-own', {
      sandbox: 'turner',
      session: 'workspace_7',
      worktree: 'wt-1',
    });
    await setTurn('turner-own', 'Running');
    await running('turner');
    // Attached with a turn running: never idle, past suspendAfterSeconds.
    await new Promise((resolve) => setTimeout(resolve, 7000));
    const busy = await untilSandbox(namespace, 'turner', 'read', () => true);
    expect(busy.status?.phase).toBe('Running');
    expect(busy.status?.idleSince).toBeUndefined();

    await setTurn('turner-own', 'Completed');
    const suspended = await untilSandbox(
      namespace,
      'turner',
      'suspended once the turn ended',
      (sandbox) => sandbox.status?.phase === 'Suspended' && sandbox.status.pods?.total === 0,
      30_000,
    );
    expect(condition(suspended, 'Suspended')).toMatchObject({ status: 'True', reason: 'Idle' });

    await setTurn('turner-own', 'Running');
    await untilPods('turner', 'its pod back', (pods) => pods.length === 1);
    await running('turner');
  });
});

describe("the client's attach", () => {
  const attach = (sandbox: string, session: string, options: Parameters<SessionReferences['attach']>[1]) =>
    new SessionReferences(kubeConfig()).attach(
      { namespace, sandbox, session, worktree: 'wt-1', route: `shared-control-v1/${session}`, role: 'Root' },
      options,
    );

  it('resumes a sandbox suspended by its spec and returns once it is Ready', async () => {
    await createSandbox(namespace, 'woken', {
      worktree: 'wt-1',
      suspension: { ...EPHEMERAL, operatingMode: 'Suspended' },
    });
    await untilSandbox(namespace, 'woken', 'suspended', (sandbox) => sandbox.status?.phase === 'Suspended');
    expect(await podsOf('woken')).toHaveLength(0);
    await attach('woken', 'workspace_5', { waitReady: { deadlineMs: 60_000, pollMs: 200 } });
    const ready = await untilSandbox(namespace, 'woken', 'read after the attach', () => true);
    expect(condition(ready, 'Ready')).toMatchObject({ status: 'True' });
    expect(ready.status?.phase).toBe('Running');
    expect((await podsOf('woken')).map((p) => p.metadata?.name)).toEqual(['woken-0']);
  });

  it('fails with SandboxNotReadyError at its deadline when it may not resume, the session still attached', async () => {
    await createSandbox(namespace, 'asleep', {
      worktree: 'wt-1',
      suspension: { ...EPHEMERAL, operatingMode: 'Suspended' },
    });
    await untilSandbox(namespace, 'asleep', 'suspended', (sandbox) => sandbox.status?.phase === 'Suspended');
    const started = Date.now();
    const refused = await attach('asleep', 'workspace_6', {
      resume: false,
      waitReady: { deadlineMs: 1500, pollMs: 200 },
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(SandboxNotReadyError);
    expect(refused).toMatchObject({ kind: 'SandboxNotReady', reason: 'Deadline', deadlineMs: 1500 });
    expect((refused as Error).message).toContain('phase Suspended, Ready Suspended');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    const reference = await getReference(namespace, sessionReferenceName('asleep', 'workspace_6'));
    expect(reference?.spec.state).toBe('Attached');
    expect((await untilSandbox(namespace, 'asleep', 'still suspended', () => true)).status?.phase).toBe(
      'Suspended',
    );
  });
});
