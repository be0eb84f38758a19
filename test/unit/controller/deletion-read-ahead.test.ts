/**
 * The reads a deletion turn starts ahead (operator/controller/deletion/read-ahead.ts): requests that do not depend on
 * each other are in flight together. Every port call here is held until the test opens the gate, so what is
 * in flight at that moment is what the turn started without waiting for an answer.
 */
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { describe, expect, it } from 'vitest';
import { reconcileDeletion } from '../../../operator/controller/deletion/turn.ts';
import { pod, sandbox, type SandboxBuilder } from '../builders.ts';
import { attached } from '../fixtures.ts';
import {
  contextOf,
  deleted,
  expect_,
  failing,
  held,
  listed,
  releasingStatus,
  releasingTurn,
  Script,
  settle,
  silent,
} from './scripted-ports.ts';

const own = attached('own', 'wt-1');
const current = expect_('sandboxes.readLive(sbx)', {
  uid: 'uid-sbx',
  deleting: true,
  finalizers: [EXCLUSIVITY_FINALIZER],
});
/** A finishing turn's subject: released by an earlier turn (Exclusive recorded), its pods gone. */
function released(): SandboxBuilder {
  const subject = sandbox('sbx').deleting().withReference(own).withGuard();
  return subject.withStatus(releasingStatus(subject, [own]));
}

describe('the reads a deletion turn starts ahead', () => {
  it('a finishing turn reads the Sandbox and its pods at once, not one after another (decided: no references LIST)', async () => {
    const subject = released();
    const script = new Script([
      current,
      expect_('pods.listLive(sbx)', []),
      expect_('guards.removeDisruptionBudget(sbx-sandbox)'),
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
      expect_('references.deleteAll(sbx, listed [own])', deleted('own')),
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
    ]);
    const { ctx, inFlight, open } = held(contextOf(subject.store(), script));
    const turn = reconcileDeletion(ctx, subject.build(), silent);
    await settle();
    expect(inFlight).toEqual(['sandboxes.readLive', 'pods.listLive']);
    open();
    expect(await turn).toEqual({ kind: 'AwaitChange' });
    script.finish();
  });

  it('a releasing turn whose cache holds no pod lists them while it writes the decision, and releases only after the write', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withGuard();
    const listedPod = pod('sbx', 0);
    const script = new Script([
      current,
      expect_('references.listLive(sbx)', listed([own], 'sbx')),
      expect_('pods.listLive(sbx)', [listedPod]),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(Releasing)'),
      expect_('pods.delete(sbx-0)'),
      expect_('pods.patchMetadata(sbx-0)'),
      expect_('guards.removeDisruptionBudget(sbx-sandbox)'),
    ]);
    const { ctx, inFlight, open } = held(contextOf(subject.store(), script));
    const turn = reconcileDeletion(ctx, subject.build(), silent);
    await settle();
    expect(inFlight).toEqual(['sandboxes.readLive', 'references.listLive']);
    open();
    await turn;
    script.finish();
    // The pods' LIST went out with the status write; the first release only once the write answered (the
    // Event is sent on that answer).
    expect(inFlight.indexOf('pods.listLive')).toBeLessThan(inFlight.indexOf('sandboxes.patchStatus'));
    expect(inFlight.indexOf('pods.delete')).toBeGreaterThan(inFlight.indexOf('events.record'));
  });

  it('a releasing turn acts on the pods its cache holds: no LIST of them', async () => {
    const subject = sandbox('sbx').deleting().withReference(own).withPods(1).withGuard();
    const script = new Script(releasingTurn(subject, [own]));
    await reconcileDeletion(contextOf(subject.store(), script), subject.build(), silent);
    script.finish();
    expect(script.calls).not.toContain('pods.listLive(sbx)');
  });

  it('a read taken by its step fails the turn with its own error', async () => {
    const subject = released();
    const refused = new Error('503 from the pods LIST');
    const script = new Script([current, failing('pods.listLive(sbx)', refused)]);
    await expect(reconcileDeletion(contextOf(subject.store(), script), subject.build(), silent)).rejects.toBe(
      refused,
    );
    script.finish();
  });

  it('a read the turn never takes fails nothing: a stale incarnation ends the turn before it', async () => {
    const subject = released();
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', {
        uid: 'uid-of-a-new-sbx',
        deleting: false,
        finalizers: [EXCLUSIVITY_FINALIZER],
      }),
      failing('pods.listLive(sbx)', new Error('503 from the pods LIST')),
    ]);
    const action = await reconcileDeletion(contextOf(subject.store(), script), subject.build(), silent);
    expect(action).toEqual({ kind: 'AwaitChange' });
    script.finish();
  });
});
