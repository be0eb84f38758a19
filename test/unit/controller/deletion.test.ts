/**
 * The deletion through scripted ports: each scenario is the list of API calls a deletion turn makes, in
 * order. Read top to bottom, a scenario is the deletion's steps (docs/deletion.md).
 */
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { describe, expect, it } from 'vitest';
import { ANNOTATIONS } from '../../../operator/api/index.ts';
import { reconcileDeletion } from '../../../operator/controller/deletion/turn.ts';
import type { Action } from '../../../operator/runtime/action.ts';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import { controllerErrorOf, errorPolicy } from '../../../operator/runtime/error-policy.ts';
import { pod, sandbox, type SandboxBuilder } from '../builders.ts';
import { attached, tombstone } from '../fixtures.ts';
import {
  contextOf,
  deletionTurn as turn,
  deleted,
  expect_,
  failing,
  listed,
  Script,
  silent,
} from './scripted-ports.ts';

/**
 * Turns of one deletion with a legacy walk configured: a turn that started a walk ends, and the walk's end
 * enqueues the sandbox (the lane's `enqueue`), which plays the next turn. The actions of every turn, in order.
 */
async function walkingTurns(
  subject: SandboxBuilder,
  expected: ConstructorParameters<typeof Script>[0],
): Promise<Action[]> {
  const script = new Script(expected);
  let walked = 0;
  const ctx = contextOf(subject.store(), script, { ledger: true, onWalked: () => (walked += 1) });
  const actions: Action[] = [];
  do {
    actions.push(await reconcileDeletion(ctx, subject.build(), silent));
    await new Promise((resolve) => setImmediate(resolve)); // the scripted walk answers in microtasks
  } while (walked === actions.length);
  script.finish();
  return actions;
}

const own = attached('own', 'wt-1');
/** Every deletion turn first reads the Sandbox live: still this incarnation (the builder's uid), deleting. */
const current = expect_('sandboxes.readLive(sbx)', {
  uid: 'uid-sbx',
  deleting: true,
  finalizers: [EXCLUSIVITY_FINALIZER],
});
const foreign = attached('foreign', 'wt-2');
/** A platform policy that refuses `maxUnavailable: 0` budgets: the guard can never be made. */
const guardRefused = new KubeRequestError('Create', 'poddisruptionbudget ns/sbx-sandbox', 403, {
  cause: new Error(
    "poddisruptionbudgets.policy \"sbx-sandbox\" is forbidden: ValidatingAdmissionPolicy 'no-zero' with binding 'no-zero' denied request: budgets must allow a disruption",
  ),
});

/**
 * The rest of a turn whose confirming LIST finds no reference (and no pod is left): decided Exclusive,
 * recorded, and the Sandbox's finalizer removed after an erase of nothing.
 */
const releasedWithNothingLeft = [
  expect_('references.listLive(sbx)', []),
  expect_('pods.listLive(sbx)', []),
  expect_('sandboxes.patchStatus(sbx)'),
  expect_('events.record(Releasing)'),
  expect_('references.deleteAll(sbx, listed [])', deleted()),
  expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
];

describe('a deletion turn', () => {
  it('releases an exclusive sandbox: guard kept, decision confirmed live, its cached pods deleted and freed, then waits', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withPods(2);
    const action = await turn(subject, [
      current,
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
      expect_('guards.ensureDisruptionBudget(sbx)', 'Created'),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(Releasing)'),
      expect_('pods.delete(sbx-0)'),
      expect_('pods.patchMetadata(sbx-0)'),
      expect_('pods.delete(sbx-1)'),
      expect_('pods.patchMetadata(sbx-1)'),
    ]);
    // No poll: the pods' DELETED events bring the next turn; the resync is the backstop.
    expect(action).toEqual({ kind: 'RequeueAfter', ms: 600_000 });
  });

  it('once the pods are gone, removes the guard, erases the index and then the finalizer', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withGuard();
    const action = await turn(subject, [
      current,
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
      expect_('pods.listLive(sbx)', []),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(Releasing)'),
      expect_('guards.removeDisruptionBudget(sbx-sandbox)'),
      expect_('references.deleteAll(sbx, listed [own])', deleted('own')),
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('frees a pod that is already terminating without deleting it again', async () => {
    const subject = sandbox('sbx').deleting().withReference(own);
    await turn(subject, [
      current,
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
      expect_('pods.listLive(sbx)', [pod('sbx', 0, { deleting: true })]),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(Releasing)'),
      expect_('pods.patchMetadata(sbx-0)'),
    ]);
  });

  it('is blocked by a foreign reference in the cache: status and an Event, and no pod is touched', async () => {
    const subject = sandbox('sbx').deleting().withReference(own, foreign).withPods(1).withGuard();
    const action = await turn(subject, [
      current,
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(DeletionBlocked)'),
    ]);
    expect(action).toEqual({ kind: 'RequeueAfter', ms: 30_000 });
  });

  it('does not let an eviction guard a policy refuses hold an exclusive release', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withPods(1);
    const action = await turn(subject, [
      current,
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
      failing('guards.ensureDisruptionBudget(sbx)', guardRefused),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(Releasing)'),
      expect_('pods.delete(sbx-0)'),
      expect_('pods.patchMetadata(sbx-0)'),
    ]);
    expect(action).toEqual({ kind: 'RequeueAfter', ms: 600_000 });
  });

  it('keeps a shared sandbox blocked when its guard is refused, and fails the turn with the refusal to say it', async () => {
    const subject = sandbox('sbx').deleting().withReference(own, foreign).withPods(1);
    const script = new Script([
      current,
      failing('guards.ensureDisruptionBudget(sbx)', guardRefused),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(DeletionBlocked)'),
    ]);
    const thrown = await reconcileDeletion(contextOf(subject.store(), script), subject.build(), silent).then(
      () => undefined,
      (error: unknown) => error,
    );
    script.finish();
    expect(errorPolicy(controllerErrorOf(thrown))).toMatchObject({
      kind: 'AwaitFix',
      misconfiguration: { reason: 'EvictionGuardRefused' },
    });
  });

  it('never releases on a cache miss alone: a foreign reference in the live LIST blocks', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withPods(1).withGuard();
    const action = await turn(subject, [
      current,
      expect_('references.listLive(sbx)', listed([own, foreign], 'sbx')),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(DeletionBlocked)'),
    ]);
    expect(action).toEqual({ kind: 'RequeueAfter', ms: 30_000 });
  });

  it('prunes its own worktree’s tombstones before deciding, and decides without them', async () => {
    const subject = sandbox('sbx').deleting().withReference(tombstone('old', 'wt-1'), foreign);
    await turn(subject, [
      current,
      expect_('references.pruneTombstones(sbx, wt-1)', deleted('old')),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(DeletionBlocked)'),
    ]);
  });

  /** Deleting, an administrator's erase INC-1 pending as the cache shows it, an own and a foreign reference. */
  const erasePending = () =>
    sandbox('sbx')
      .deleting()
      .withAnnotation(ANNOTATIONS.eraseReferences, 'INC-1')
      .withReference(own, foreign)
      .withStatus({ phase: 'Blocked', reconciliation: { state: 'NotRequired', marker: true } });

  it('acts on an erase request first, then decides on what the API server holds after it', async () => {
    // An earlier turn wrote its status: the request is the administrator's, not inherited (erase-request.test.ts).
    const subject = erasePending();
    const action = await turn(subject, [
      current,
      expect_('references.deleteAll(sbx)', deleted('own', 'foreign')),
      expect_('references.listLive(sbx)', []),
      expect_('events.record(ReferencesErased)'),
      ...releasedWithNothingLeft,
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('does not erase again on a cache that lags the status recording the erase (the soak’s seed 20270336)', async () => {
    // The live turn erased and recorded erasedFor INC-1; the cache, not yet showing that status, still reads the
    // request as pending. A second erase would delete references attached since: the live read says it is done.
    const subject = erasePending();
    const action = await turn(subject, [
      expect_('sandboxes.readLive(sbx)', {
        uid: 'uid-sbx',
        deleting: true,
        finalizers: [EXCLUSIVITY_FINALIZER],
        eraseRequest: 'INC-1',
        erasedFor: 'INC-1',
      }),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('erases again, later, when a reference changed under the erase (its attach withdraws it)', async () => {
    const subject = sandbox('sbx').deleting().withReference(own);
    const action = await turn(subject, [
      current,
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
      expect_('pods.listLive(sbx)', []),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(Releasing)'),
      expect_('references.deleteAll(sbx, listed [own])', { deleted: ['own'], changed: ['late'] }),
    ]);
    expect(action).toEqual({ kind: 'RequeueAfter', ms: 1_000 });
  });

  it('touches nothing when the API server holds another incarnation under the name', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withPods(1);
    const action = await turn(subject, [
      expect_('sandboxes.readLive(sbx)', {
        uid: 'uid-of-a-new-sbx',
        deleting: false,
        finalizers: [EXCLUSIVITY_FINALIZER],
      }),
      // Started beside the GET (the cache predicts Exclusive), and never taken: the turn ends on the GET.
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('walks the legacy ledger before it prunes and decides, so no walk sits between a LIST and the decision', async () => {
    const subject = sandbox('sbx')
      .deleting()
      .withAnnotation(ANNOTATIONS.adoptedFrom, 'legacy-pool')
      .withReference(tombstone('old', 'wt-1'));
    const stats = { owners: 1, lookedUp: 1, skippedLegacy: 0, timedOut: 0, failed: 0, elapsedMs: 5 };
    // Two turns: the first starts the walk in its lane and ends; the walk's end brings the second.
    await walkingTurns(subject, [
      current,
      expect_('legacy.walk(sbx)', { kind: 'Complete', stats }),
      current,
      expect_('references.pruneTombstones(sbx, wt-1)', deleted('old')),
      ...releasedWithNothingLeft,
    ]);
  });

  it('does nothing once our finalizer is gone', async () => {
    const subject = sandbox('sbx').withMetadata({ deletionTimestamp: '2026-11-30T12:00:00Z' });
    expect(await turn(subject, [])).toEqual({ kind: 'AwaitChange' });
  });

  it('fails a scenario with what it expected and what came', async () => {
    const subject = sandbox('sbx').deleting().withReference(own);
    await expect(turn(subject, [current, expect_('pods.delete(sbx-0)')])).rejects.toThrow(
      'expected pods.delete(sbx-0), got references.listLive(sbx)',
    );
  });
});
