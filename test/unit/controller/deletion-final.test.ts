/**
 * A recorded Exclusive decision is final (issue 25, #7; docs/deletion.md): it was confirmed on a LIST made
 * after the fence, so a reference written since is an attach that saw the deletion and withdraws (or failed
 * to). A later turn does not decide again: it finishes the release, erases its own worktree's references with
 * the index and such late references once the finalizer is gone (the operator's reference review refuses a
 * foreign reference's delete while its sandbox stands, docs/adr/0011), and says so. Before, a late reference
 * made the next turn decide Foreign, with the pods already gone.
 */
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { describe, expect, it } from 'vitest';
import { sandbox } from '../builders.ts';
import { attached } from '../fixtures.ts';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import {
  deletionTurn as turn,
  deleted,
  expect_,
  failing,
  listed,
  releasingStatus,
} from './scripted-ports.ts';

const own = attached('own', 'wt-1');
const late = attached('late', 'wt-2');
const current = expect_('sandboxes.readLive(sbx)', {
  uid: 'uid-sbx',
  deleting: true,
  finalizers: [EXCLUSIVITY_FINALIZER],
});

describe('a released deletion and a reference written after its decision', () => {
  it('finishes: the pods listed gone, its own reference erased, the finalizer removed, then the late one erased and reported', async () => {
    const subject = sandbox('sbx').deleting().withReference(own, late);
    subject.withStatus(releasingStatus(subject, [own]));
    const action = await turn(subject, [
      current,
      expect_('pods.listLive(sbx)', []),
      expect_('references.listLive(sbx)', listed([own, late], 'sbx')),
      expect_('references.deleteAll(sbx, listed [own])', deleted('own')),
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
      expect_('references.deleteAll(sbx, listed [late])', deleted('late')),
      expect_('events.record(LateReferencesErased)'),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('finishes all the same when the late erase fails: the sandbox is released, the late reference left to its host', async () => {
    const subject = sandbox('sbx').deleting().withReference(own, late);
    subject.withStatus(releasingStatus(subject, [own]));
    const refused = new KubeRequestError('Delete', 'sessionreference ns/late', 409, {
      cause: new Error('admission webhook denied the request'),
    });
    const action = await turn(subject, [
      current,
      expect_('pods.listLive(sbx)', []),
      expect_('references.listLive(sbx)', listed([own, late], 'sbx')),
      expect_('references.deleteAll(sbx, listed [own])', deleted('own')),
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
      // Tried again after each of the context's waits (no turn of a released sandbox comes again), then left.
      failing('references.deleteAll(sbx, listed [late])', refused),
      failing('references.deleteAll(sbx, listed [late])', refused),
      failing('references.deleteAll(sbx, listed [late])', refused),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('tries a late erase that failed again, and says what it erased then', async () => {
    const subject = sandbox('sbx').deleting().withReference(own, late);
    subject.withStatus(releasingStatus(subject, [own]));
    const unanswered = new KubeRequestError('Delete', 'sessionreference ns/late', 503, {
      cause: new Error('could not read what decides the delete'),
    });
    const action = await turn(subject, [
      current,
      expect_('pods.listLive(sbx)', []),
      expect_('references.listLive(sbx)', listed([own, late], 'sbx')),
      expect_('references.deleteAll(sbx, listed [own])', deleted('own')),
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
      failing('references.deleteAll(sbx, listed [late])', unanswered),
      expect_('references.deleteAll(sbx, listed [late])', deleted('late')),
      expect_('events.record(LateReferencesErased)'),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('reports a late reference its cache has not seen yet: the erase names the late among what its own LIST found', async () => {
    // The soak's seed 20261246: the reference was written 8 ms before the erase, its watch event not yet in.
    const subject = sandbox('sbx').deleting().withReference(own);
    subject.withStatus(releasingStatus(subject, [own]));
    const unseen = attached('unseen', 'wt-2');
    await turn(subject, [
      current,
      expect_('pods.listLive(sbx)', []),
      expect_('references.listLive(sbx)', listed([own, unseen], 'sbx')),
      expect_('references.deleteAll(sbx, listed [own])', deleted('own')),
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
      expect_('references.deleteAll(sbx, listed [unseen])', deleted('unseen')),
      expect_('events.record(LateReferencesErased)'),
    ]);
  });

  it('does not report its own worktree’s reference written late: it would not have blocked the release', async () => {
    const subject = sandbox('sbx').deleting();
    subject.withStatus(releasingStatus(subject, [own]));
    await turn(subject, [
      current,
      expect_('pods.listLive(sbx)', []),
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
      expect_('references.deleteAll(sbx, listed [own])', deleted('own')),
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
    ]);
  });

  it('goes on releasing a pod an interrupted release left, without deciding again', async () => {
    const subject = sandbox('sbx').deleting().withReference(own, late).withPods(1, { deleting: true });
    subject.withStatus(releasingStatus(subject, [own]));
    await turn(subject, [current, expect_('pods.patchMetadata(sbx-0)')]);
  });

  it('releases a pod the decision was recorded for but a crash kept from deleting', async () => {
    const subject = sandbox('sbx').deleting().withReference(own, late).withPods(1).withGuard();
    subject.withStatus(releasingStatus(subject, [own]));
    await turn(subject, [
      current,
      expect_('pods.delete(sbx-0)'),
      expect_('pods.patchMetadata(sbx-0)'),
      expect_('guards.removeDisruptionBudget(sbx-sandbox)'),
    ]);
  });

  it('is not final when it was not Exclusive: a Foreign decision is made again, and blocks', async () => {
    const subject = sandbox('sbx').deleting().withReference(own, late).withPods(1).withGuard();
    const action = await turn(subject, [
      current,
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(DeletionBlocked)'),
    ]);
    expect(action).toEqual({ kind: 'RequeueAfter', ms: 30_000 });
  });
});

describe('a finished deletion', () => {
  it('takes a Sandbox already gone when its finalizer is removed as finished, not as a failure to retry', async () => {
    const subject = sandbox('sbx').deleting();
    subject.withStatus(releasingStatus(subject, []));
    const gone = new KubeRequestError('PatchFinalizers', 'sandbox ns/sbx', 404, {
      cause: new Error('sandboxes.sandbox.agents.dev "sbx" not found'),
    });
    const action = await turn(subject, [
      expect_('pods.listLive(sbx)', []),
      failing('sandboxes.patchMetadata(sbx)', gone),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });
});
