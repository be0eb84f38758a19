/**
 * The reconcile of a live Sandbox through scripted ports: each scenario lists the API calls in order, so it
 * reads as what the controller does for a sandbox that is not being deleted.
 */
import { describe, expect, it } from 'vitest';
import { reconcileSandbox } from '../../../operator/controller/sandbox-reconciler.ts';
import type { Action } from '../../../operator/runtime/action.ts';
import { NAMESPACE, sandbox, type SandboxBuilder } from '../builders.ts';
import { attached } from '../fixtures.ts';
import { contextOf, expect_, failing, held, listed, Script, settle, silent } from './scripted-ports.ts';
import { recordingStatusVersions as statusVersions } from './scripted-ports.ts';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import { MalformedObjectError } from '../../../operator/api/parse.ts';
import { Misconfigurations } from '../../../operator/controller/misconfiguration.ts';
import { controllerErrorOf, errorPolicy } from '../../../operator/runtime/error-policy.ts';

async function turn(
  subject: SandboxBuilder,
  expected: ConstructorParameters<typeof Script>[0],
): Promise<Action> {
  const script = new Script(expected);
  const action = await reconcileSandbox(
    contextOf(subject.store(), script),
    `${NAMESPACE}/${subject.name}`,
    silent,
  );
  script.finish();
  return action;
}

const RESYNC = { kind: 'RequeueAfter', ms: 600_000 };

describe('a live sandbox’s reconcile', () => {
  /** A new Sandbox of 2 replicas, and the calls of its first turn: the finalizer, then status, guard and pods. */
  const fresh = () => sandbox('sbx').withSpec({ replicas: 2 });
  const firstTurn = () => [
    expect_('sandboxes.patchMetadata(sbx)', {
      resourceVersion: '2',
      sandbox: () => ({ ok: true, value: fresh().finalized().build() }),
    }),
    expect_('sandboxes.patchStatus(sbx)'),
    expect_('guards.ensureDisruptionBudget(sbx)', 'Created'),
    expect_('pods.create(sbx-0)', 'Created'),
    expect_('pods.create(sbx-1)', 'Created'),
  ];

  it('adds the exclusivity finalizer first, then goes on from the Sandbox the PATCH answered: status, guard, pods', async () => {
    expect(await turn(fresh(), firstTurn())).toEqual(RESYNC);
  });

  it('has the status and the guard in flight at once after the finalizer; the pods follow a guard it had to make', async () => {
    const script = new Script(firstTurn());
    // The finalizer's PATCH answered, everything after it held: what is in flight is what went out at once.
    const { ctx, inFlight, open } = held(contextOf(fresh().store(), script), 1);
    const reconciled = reconcileSandbox(ctx, `${NAMESPACE}/sbx`, silent);
    await settle();
    // No pod before the guard stands: one a policy refuses for good would leave them running unguarded.
    expect(inFlight).toEqual([
      'sandboxes.patchMetadata',
      'sandboxes.patchStatus',
      'guards.ensureDisruptionBudget',
    ]);
    open();
    await reconciled;
    script.finish();
  });

  it('has the status and the pods in flight at once when the cache shows the guard standing', async () => {
    const guarded = sandbox('sbx').finalized().withSpec({ replicas: 1 }).withGuard();
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', guarded.live()),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('pods.create(sbx-0)', 'Created'),
    ]);
    // The template's live read answered (the cache keeps none), everything after it held.
    const { ctx, inFlight, open } = held(contextOf(guarded.store(), script), 1);
    const reconciled = reconcileSandbox(ctx, `${NAMESPACE}/sbx`, silent);
    await settle();
    expect(inFlight).toEqual(['sandboxes.readLive', 'sandboxes.patchStatus', 'pods.create']);
    open();
    await reconciled;
    script.finish();
  });

  it('creates no pod beside an eviction guard a policy refuses, and says it as a misconfiguration', async () => {
    const refused = new KubeRequestError('Create', 'poddisruptionbudget ns/sbx-sandbox', 403, {
      cause: new Error(
        "poddisruptionbudgets.policy \"sbx-sandbox\" is forbidden: ValidatingAdmissionPolicy 'no-zero' with binding 'no-zero' denied request: budgets must allow a disruption",
      ),
    });
    const subject = sandbox('sbx').finalized().withSpec({ replicas: 2 });
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', subject.live()),
      expect_('sandboxes.patchStatus(sbx)'),
      failing('guards.ensureDisruptionBudget(sbx)', refused),
    ]);
    const thrown = await reconcileSandbox(contextOf(subject.store(), script), 'ns/sbx', silent).then(
      () => undefined,
      (error: unknown) => error,
    );
    script.finish();
    expect(errorPolicy(controllerErrorOf(thrown))).toMatchObject({
      kind: 'AwaitFix',
      misconfiguration: {
        reason: 'EvictionGuardRefused',
        refused: expect.stringContaining('budgets must allow a disruption'),
        fix: expect.stringContaining('app.kubernetes.io/managed-by=sandbox-operator'),
      },
    });
  });

  it('says an unreadable Sandbox on the object and as a misconfiguration, and touches nothing of it', async () => {
    const subject = sandbox('sbx').finalized().withPods(1).withGuard();
    const unreadable = new MalformedObjectError(
      'Sandbox',
      'ns/sbx',
      'status.unreferencedSince',
      'Invalid ISO datetime',
      {},
      { uid: 'uid-sbx', resourceVersion: '9' },
    );
    const store = { ...subject.store(), sandbox: () => ({ ok: false as const, error: unreadable }) };
    const script = new Script([expect_('events.record(Unreadable)')]);
    const thrown = await reconcileSandbox(contextOf(store, script), 'ns/sbx', silent).then(
      () => undefined,
      (error: unknown) => error,
    );
    script.finish();
    expect(errorPolicy(controllerErrorOf(thrown))).toMatchObject({
      kind: 'AwaitFix',
      misconfiguration: {
        reason: 'Unreadable',
        fix: expect.stringContaining('correct status.unreferencedSince'),
      },
    });
  });

  it('fails the turn with the first failed write when several of its writes fail, after all have answered', async () => {
    const statusRefused = new KubeRequestError('PatchStatus', 'sandbox ns/sbx', 409, {
      cause: new Error('conflict'),
    });
    const podRefused = new KubeRequestError('Create', 'pod ns/sbx-0', 500, { cause: new Error('etcd') });
    const subject = sandbox('sbx').finalized().withSpec({ replicas: 2 });
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', subject.live()),
      failing('sandboxes.patchStatus(sbx)', statusRefused),
      expect_('guards.ensureDisruptionBudget(sbx)', 'Created'),
      failing('pods.create(sbx-0)', podRefused),
    ]);
    const thrown = await reconcileSandbox(contextOf(subject.store(), script), 'ns/sbx', silent).then(
      () => undefined,
      (error: unknown) => error,
    );
    script.finish();
    expect(thrown).toBe(statusRefused);
  });

  it('waits for the update event when the PATCH answered something else: deleted meanwhile, or unreadable', async () => {
    const deleted = { ok: true, value: sandbox('sbx').finalized().deleting().build() };
    for (const answer of [{ resourceVersion: '2' }, { resourceVersion: '2', sandbox: () => deleted }]) {
      const action = await turn(sandbox('sbx').withSpec({ replicas: 2 }), [
        expect_('sandboxes.patchMetadata(sbx)', answer),
      ]);
      expect(action).toEqual({ kind: 'AwaitChange' });
    }
  });

  it('writes its status, its eviction guard and its missing pods once finalized', async () => {
    const subject = sandbox('sbx')
      .finalized()
      .withSpec({ replicas: 2 })
      .withReference(attached('r1', 'wt-1'));
    const action = await turn(subject, [
      expect_('sandboxes.readLive(sbx)', subject.live()),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('guards.ensureDisruptionBudget(sbx)', 'Created'),
      expect_('pods.create(sbx-0)', 'Created'),
      expect_('pods.create(sbx-1)', 'Created'),
    ]);
    expect(action).toEqual(RESYNC);
  });

  it('releases a terminating pod of a live sandbox (an eviction), and re-creates it only once it is gone', async () => {
    const subject = sandbox('sbx')
      .finalized()
      .withReference(attached('r1', 'wt-1'))
      .withPods(1, { deleting: true })
      .withGuard();
    await turn(subject, [expect_('sandboxes.patchStatus(sbx)'), expect_('pods.patchMetadata(sbx-0)')]);
  });

  it('creates no pod in a terminating namespace, and does not fail on it', async () => {
    const refused = new KubeRequestError('Create', 'pod ns/sbx-0', 403, {
      cause: new Error(
        'pods "sbx-0" is forbidden: unable to create new content in namespace ns because it is being terminated',
      ),
    });
    const subject = sandbox('sbx').finalized().withSpec({ replicas: 2 }).withGuard();
    const action = await turn(subject, [
      expect_('sandboxes.readLive(sbx)', subject.live()),
      expect_('sandboxes.patchStatus(sbx)'),
      failing('pods.create(sbx-0)', refused),
    ]);
    expect(action).toEqual(RESYNC);
  });

  it('deletes an unreferenced sandbox past its TTL: fence, a consistent LIST, an Event, a preconditioned delete', async () => {
    const subject = sandbox('sbx')
      .finalized()
      .withSpec({ cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 60 } })
      .withStatus({ unreferencedSince: '2026-11-30T11:00:00Z' });
    const action = await turn(subject, [
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '7' }),
      expect_('references.listLive(sbx)', []),
      expect_('events.record(CleanupStarted)'),
      expect_('sandboxes.delete(sbx)'),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('keeps a sandbox the cache thinks unreferenced when the LIST after the fence finds a reference', async () => {
    const subject = sandbox('sbx')
      .finalized()
      .withGuard()
      .withSpec({ cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 60 } })
      .withStatus({ unreferencedSince: '2026-11-30T11:00:00Z' });
    await turn(subject, [
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '7' }),
      expect_('references.listLive(sbx)', listed([attached('late', 'wt-1')], 'sbx')),
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '8' }),
      expect_('sandboxes.patchStatus(sbx)'),
    ]);
  });

  describe('suspended', () => {
    const ephemeral = { workspace: 'Ephemeral' as const };
    it('deletes its running pods, each on the uid and version read, keeps its guard, and creates none', async () => {
      const subject = sandbox('sbx')
        .finalized()
        .withSpec({ ...ephemeral, operatingMode: 'Suspended' })
        .withReference(attached('r1', 'wt-1'))
        .withPods(2)
        .withPods(3, { deleting: true, finalizers: [] })
        .withGuard();
      const action = await turn(subject, [
        expect_('sandboxes.patchStatus(sbx)'),
        expect_('pods.delete(sbx-0, uid-sbx-0@5)'),
        expect_('events.record(Suspended)'),
        expect_('pods.delete(sbx-1, uid-sbx-1@5)'),
      ]);
      expect(action).toEqual(RESYNC);
    });

    it('leaves a pod changed since the cache read it (409) to the turn its change brings, and goes on', async () => {
      const conflict = new KubeRequestError('Delete', 'pod ns/sbx-0', 409, { cause: new Error('changed') });
      const subject = sandbox('sbx')
        .finalized()
        .withSpec({ ...ephemeral, operatingMode: 'Suspended' })
        .withPods(2)
        .withGuard();
      const action = await turn(subject, [
        expect_('sandboxes.patchStatus(sbx)'),
        failing('pods.delete(sbx-0, uid-sbx-0@5)', conflict),
        expect_('events.record(Suspended)'),
        expect_('pods.delete(sbx-1, uid-sbx-1@5)'),
      ]);
      expect(action).toEqual(RESYNC);
    });

    it('creates no pod while suspended, and its pods again (same names) once running', async () => {
      const stopped = sandbox('sbx')
        .finalized()
        .withSpec({ ...ephemeral, replicas: 2, operatingMode: 'Suspended' })
        .withGuard();
      await turn(stopped, [expect_('sandboxes.patchStatus(sbx)'), expect_('events.record(Suspended)')]);
      const suspendedStatus = {
        reconciliation: { state: 'NotRequired' as const, marker: true },
        conditions: [
          {
            type: 'Suspended',
            status: 'True' as const,
            reason: 'Requested',
            message: '',
            lastTransitionTime: '2026-11-30T11:00:00Z',
          },
        ],
      };
      const resumed = sandbox('sbx')
        .finalized()
        .withSpec({ ...ephemeral, replicas: 2 })
        .withStatus(suspendedStatus)
        .withGuard();
      await turn(resumed, [
        expect_('sandboxes.readLive(sbx)', resumed.live()),
        expect_('sandboxes.patchStatus(sbx)'),
        expect_('pods.create(sbx-0)', 'Created'),
        expect_('events.record(Resumed)'),
        expect_('pods.create(sbx-1)', 'Created'),
      ]);
    });

    it('idle by references: confirms by a consistent LIST that none is attached before deleting its pods', async () => {
      const idle = () =>
        sandbox('sbx')
          .finalized()
          .withSpec({ ...ephemeral, idle: { suspendAfterSeconds: 60 } })
          .withStatus({ idleSince: '2026-11-30T11:00:00Z' })
          .withReference({ ...attached('t', 'wt-1'), state: 'Detached' })
          .withPods(1)
          .withGuard();
      await turn(idle(), [
        expect_('sandboxes.patchStatus(sbx)'),
        expect_('references.listLive(sbx)', listed([{ ...attached('t', 'wt-1'), state: 'Detached' }], 'sbx')),
        expect_('events.record(Suspended)'),
        expect_('pods.delete(sbx-0, uid-sbx-0@5)'),
      ]);
      await turn(idle(), [
        expect_('sandboxes.patchStatus(sbx)'),
        expect_('references.listLive(sbx)', listed([attached('late', 'wt-1')], 'sbx')),
        expect_('events.record(Suspended)'),
      ]);
    });

    it('comes back when its idle clock runs out', async () => {
      const subject = sandbox('sbx')
        .finalized()
        .withSpec({ ...ephemeral, idle: { suspendAfterSeconds: 60 } })
        .withStatus({ idleSince: '2026-11-30T11:59:30Z' })
        .withPods(1)
        .withGuard();
      const action = await turn(subject, [expect_('sandboxes.patchStatus(sbx)')]);
      expect(action).toEqual({ kind: 'RequeueAfter', ms: 30_000 });
    });
  });

  it('refuses, as a misconfiguration and before any pod, a shell reaper mode the template cannot have', async () => {
    const subject = sandbox('sbx')
      .finalized()
      .withSpec({ replicas: 1, shellReaper: { enabled: true, gracePeriodSeconds: 5, mode: 'SameUser' } })
      .withGuard();
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', subject.live()),
      expect_('sandboxes.patchStatus(sbx)'),
    ]);
    const thrown = await reconcileSandbox(contextOf(subject.store(), script), 'ns/sbx', silent).then(
      () => undefined,
      (error: unknown) => error,
    );
    script.finish();
    const decision = errorPolicy(controllerErrorOf(thrown));
    expect(decision).toMatchObject({
      kind: 'AwaitFix',
      misconfiguration: {
        reason: 'ShellReaperModeRefused',
        fix: expect.stringContaining('spec.shellReaper.mode SameUser runs the sidecar as the agent'),
      },
    });
  });

  it('records a misconfiguration the runner met on the sandbox, with one Warning Event', async () => {
    const subject = sandbox('sbx').finalized().withSpec({ replicas: 1 }).withGuard();
    const misconfigurations = new Misconfigurations();
    misconfigurations.record('ns/sbx', {
      reason: 'RBACForbidden',
      refused: 'Create pod ns/sbx-0 …',
      fix: 'grant …',
    });
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', subject.live()),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('pods.create(sbx-0)', 'Created'),
      expect_('events.record(RBACForbidden)'),
    ]);
    await reconcileSandbox(contextOf(subject.store(), script, { misconfigurations }), 'ns/sbx', silent);
    script.finish();
  });

  it('lands the write that announces a misconfiguration only on the Sandbox as read: a stale turn cannot say it twice', async () => {
    const subject = sandbox('sbx').finalized().withSpec({ replicas: 1 }).withGuard();
    subject.withMetadata({ resourceVersion: '41' });
    const misconfigurations = new Misconfigurations();
    misconfigurations.record('ns/sbx', { reason: 'RBACForbidden', refused: 'Create pod …', fix: 'grant …' });
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', subject.live()),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('pods.create(sbx-0)', 'Created'),
      expect_('events.record(RBACForbidden)'),
    ]);
    const { ctx, versions } = statusVersions(contextOf(subject.store(), script, { misconfigurations }));
    await reconcileSandbox(ctx, 'ns/sbx', silent);
    script.finish();
    expect(versions).toEqual(['41']);
  });

  // Issue 26, #5: the cache keeps no pod template; the pods come from the template read live, and only from
  // the incarnation the turn decided on.
  it('creates the missing pods from the template read live, not from the cache', async () => {
    const subject = sandbox('sbx').finalized().withSpec({ replicas: 1 }).withGuard();
    const live = {
      ...subject.live(),
      podTemplate: { spec: { containers: [{ name: 'live', image: 'live:2' }] } },
    };
    const created: string[] = [];
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', live),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('pods.create(sbx-0)', 'Created'),
    ]);
    const base = contextOf(subject.store(), script);
    const pods = {
      ...base.ports.pods,
      create: (pod: Parameters<typeof base.ports.pods.create>[0]) => {
        created.push(pod.spec?.containers[0]?.image ?? '?');
        return base.ports.pods.create(pod);
      },
    };
    const cached = subject.store().sandbox('ns/sbx');
    expect(cached?.ok === true && 'podTemplate' in cached.value.spec).toBe(false);
    await reconcileSandbox({ ...base, ports: { ...base.ports, pods } }, 'ns/sbx', silent);
    script.finish();
    expect(created).toEqual(['live:2']);
  });

  describe('with a persistent workspace', () => {
    const workspace = {
      volumeClaimTemplates: [
        {
          metadata: { name: 'work' },
          spec: { accessModes: ['ReadWriteOnce' as const], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    };

    it('creates the claim before the pod, and mounts it by the template name', async () => {
      const subject = sandbox('sbx')
        .finalized()
        .withSpec({ replicas: 1, ...workspace })
        .withGuard();
      const mounted: unknown[] = [];
      const script = new Script([
        expect_('sandboxes.readLive(sbx)', subject.live()),
        expect_('sandboxes.patchStatus(sbx)'),
        expect_('claims.read(work-sbx)', undefined),
        expect_('claims.create(work-sbx)', 'Created'),
        expect_('pods.create(sbx-0)', 'Created'),
      ]);
      const base = contextOf(subject.store(), script);
      const pods = {
        ...base.ports.pods,
        create: (pod: Parameters<typeof base.ports.pods.create>[0]) => {
          mounted.push(...(pod.spec?.volumes ?? []));
          return base.ports.pods.create(pod);
        },
      };
      await reconcileSandbox({ ...base, ports: { ...base.ports, pods } }, 'ns/sbx', silent);
      script.finish();
      expect(mounted).toEqual([{ name: 'work', persistentVolumeClaim: { claimName: 'work-sbx' } }]);
    });

    it('creates no pod whose template already has a volume of a claim template’s name', async () => {
      const subject = sandbox('sbx')
        .finalized()
        .withSpec({ replicas: 1, ...workspace })
        .withGuard();
      const live = {
        ...subject.live(),
        podTemplate: {
          spec: { containers: [{ name: 'a', image: 'a:1' }], volumes: [{ name: 'work', emptyDir: {} }] },
        },
      };
      const script = new Script([
        expect_('sandboxes.readLive(sbx)', live),
        expect_('sandboxes.patchStatus(sbx)'),
        expect_('claims.read(work-sbx)', undefined),
        expect_('claims.create(work-sbx)', 'Created'),
      ]);
      const thrown = await reconcileSandbox(contextOf(subject.store(), script), 'ns/sbx', silent).then(
        () => undefined,
        (error: unknown) => error,
      );
      script.finish();
      expect(errorPolicy(controllerErrorOf(thrown))).toMatchObject({
        kind: 'AwaitFix',
        misconfiguration: { reason: 'VolumeNameCollision' },
      });
    });

    it('creates no pod while its claim is going, and looks again soon', async () => {
      const subject = sandbox('sbx')
        .finalized()
        .withSpec({ replicas: 1, ...workspace })
        .withGuard();
      const going = {
        name: 'work-sbx',
        uid: 'c1',
        resourceVersion: '3',
        sandboxLabel: 'sbx',
        labelled: true,
        controller: { kind: 'Sandbox', name: 'sbx', uid: subject.live().uid },
        ownerReferences: [],
        finalizers: [],
        deleting: true,
      };
      const action = await turn(subject, [
        expect_('sandboxes.readLive(sbx)', subject.live()),
        expect_('sandboxes.patchStatus(sbx)'),
        expect_('claims.read(work-sbx)', going),
      ]);
      expect(action).toEqual({ kind: 'RequeueAfter', ms: 2_000 });
    });
  });

  it.each([
    ['another incarnation under the name', { uid: 'uid-of-a-new-sbx', deleting: false, finalizers: [] }],
    ['the Sandbox being deleted', { deleting: true }],
    ['no Sandbox any more', undefined],
  ])('creates no pod when the live read finds %s', async (_case, change) => {
    const subject = sandbox('sbx').finalized().withSpec({ replicas: 1 }).withGuard();
    const action = await turn(subject, [
      expect_('sandboxes.readLive(sbx)', change && { ...subject.live(), ...change }),
      expect_('sandboxes.patchStatus(sbx)'),
    ]);
    expect(action).toEqual(RESYNC);
  });

  it('leaves a sandbox it cannot find in the cache alone', async () => {
    const script = new Script([]);
    const action = await reconcileSandbox(contextOf(sandbox('sbx').store(), script), 'ns/other', silent);
    script.finish();
    expect(action).toEqual({ kind: 'AwaitChange' });
  });
});
