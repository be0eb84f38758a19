/**
 * A released deletion waiting for its pods (issue 13): the turns between the release and the pods' DELETED
 * events make no request, the turn that sees the pods gone finishes the deletion in one go, and the only
 * thing that brings it is the pod watch (no poll).
 */
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { describe, expect, it } from 'vitest';
import { pod, sandbox, type SandboxBuilder } from '../builders.ts';
import { attached } from '../fixtures.ts';
import {
  deletionTurn as turn,
  deleted,
  expect_,
  listed,
  releasingStatus,
  releasingTurn,
} from './scripted-ports.ts';

const RESYNC_MS = 600_000; // contextOf's resync: the backstop for a missed event, never a poll

const own = attached('own', 'wt-1');
const current = expect_('sandboxes.readLive(sbx)', {
  uid: 'uid-sbx',
  deleting: true,
  finalizers: [EXCLUSIVITY_FINALIZER],
});
describe('a released deletion waiting for its pods', () => {
  it('ends the releasing turn without a poll: the pods’ DELETED events bring the next one', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withPods(1).withGuard();
    const action = await turn(subject, releasingTurn(subject, [own]));
    expect(action).toEqual({ kind: 'RequeueAfter', ms: RESYNC_MS });
  });

  it('makes no request while the cache shows every pod released and terminating', async () => {
    const subject = sandbox('sbx')
      .deleting()
      .withReference(own)
      .withPods(1, { deleting: true, finalizers: [] })
      .withGuard();
    subject.withStatus(releasingStatus(subject, [own]));
    expect(await turn(subject, [])).toEqual({ kind: 'RequeueAfter', ms: RESYNC_MS });
  });

  it('still releases a terminating pod that holds our finalizer', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withPods(1, { deleting: true }).withGuard();
    subject.withStatus(releasingStatus(subject, [own]));
    await turn(subject, [
      current,
      expect_('pods.patchMetadata(sbx-0)'),
      expect_('guards.removeDisruptionBudget(sbx-sandbox)'),
    ]);
  });

  it('finishes in the turn that sees the pods gone: no decision made again, no status write, the index erased on its own consistent LIST, one Event per deletion', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withGuard();
    subject.withStatus(releasingStatus(subject, [own]));
    const action = await turn(subject, [
      current,
      expect_('pods.listLive(sbx)', []),
      expect_('guards.removeDisruptionBudget(sbx-sandbox)'),
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
      expect_('references.deleteAll(sbx, listed [own])', deleted('own')),
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  describe('a released sandbox that holds and recorded no reference', () => {
    /** Released by an earlier turn (Exclusive recorded with no reference); the cache holds nothing of it. */
    function releasedAlone(): SandboxBuilder {
      const subject = sandbox('sbx').deleting();
      return subject.withStatus(releasingStatus(subject, []));
    }

    it('finishes on a consistent LIST of its pods alone: no incarnation read, no decision made again', async () => {
      const subject = releasedAlone();
      const action = await turn(subject, [
        expect_('pods.listLive(sbx)', []),
        expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
      ]);
      expect(action).toEqual({ kind: 'AwaitChange' });
    });

    it('removes a guard the cache still holds only the whole way: it is found by name, so the incarnation first', async () => {
      const subject = releasedAlone().withGuard();
      await turn(subject, [
        expect_('pods.listLive(sbx)', []),
        current,
        expect_('guards.removeDisruptionBudget(sbx-sandbox)'),
        expect_('references.listLive(sbx)', []),
        expect_('references.deleteAll(sbx, listed [])', deleted()),
        expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
      ]);
    });

    it('keeps waiting while the LIST finds released pods the cache no longer holds', async () => {
      const subject = releasedAlone();
      const going = [pod('sbx', 0, { deleting: true, finalizers: [] })];
      const action = await turn(subject, [expect_('pods.listLive(sbx)', going)]);
      expect(action).toEqual({ kind: 'RequeueAfter', ms: RESYNC_MS });
    });

    it('goes the whole way when the LIST finds a pod still to release: the incarnation, then the release (the decision stands)', async () => {
      const subject = releasedAlone();
      const unreleased = pod('sbx', 0);
      await turn(subject, [
        expect_('pods.listLive(sbx)', [unreleased]),
        current,
        expect_('pods.delete(sbx-0)'),
        expect_('pods.patchMetadata(sbx-0)'),
      ]);
    });

    it('is not taken for a sandbox whose recorded index held references: their erase needs the incarnation read first', async () => {
      const subject = sandbox('sbx').deleting();
      subject.withStatus(releasingStatus(subject, [own]));
      await turn(subject, [
        current,
        expect_('pods.listLive(sbx)', []),
        expect_('references.listLive(sbx)', []),
        expect_('references.deleteAll(sbx, listed [])', deleted()),
        expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
      ]);
    });
  });
});
