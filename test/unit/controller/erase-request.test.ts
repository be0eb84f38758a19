/**
 * The administrator's erase request (issue 25, #10): acted on once per request per incarnation, and fenced.
 * An annotation an incarnation carried before the operator ever wrote its status is inherited (a GitOps tool
 * keeps it on every re-created Sandbox), not a request: recorded, never acted on. A real request raises the
 * fence first, testing the version it read, so a stale cache (which would erase a second time, references
 * attached since included) conflicts before anything is erased, and an attach during the erase withdraws.
 */
import { describe, expect, it } from 'vitest';
import { ANNOTATIONS, UNOBSERVED_STATUS } from '../../../operator/api/index.ts';
import { reconcileSandbox } from '../../../operator/controller/sandbox-reconciler.ts';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import { NAMESPACE, sandbox, type SandboxBuilder } from '../builders.ts';
import { attached } from '../fixtures.ts';
import {
  contextOf,
  deleted,
  expect_,
  failing,
  listed,
  recordingStatusVersions,
  Script,
  silent,
} from './scripted-ports.ts';

async function liveTurn(subject: SandboxBuilder, expected: ConstructorParameters<typeof Script>[0]) {
  const script = new Script(expected);
  const ctx = contextOf(subject.store(), script);
  const outcome = await reconcileSandbox(ctx, `${NAMESPACE}/${subject.name}`, silent).then(
    (action) => ({ action }),
    (error: unknown) => ({ error }),
  );
  script.finish();
  return { outcome, calls: script.calls };
}

const own = attached('own', 'wt-1');

/** A running sandbox the operator has written a status for (an earlier turn). */
const running = () =>
  sandbox('sbx')
    .finalized()
    .withReference(own)
    .withGuard()
    .withPods(1)
    .withStatus({ phase: 'Running', reconciliation: { state: 'NotRequired', marker: true } });

describe('an erase request on a live sandbox', () => {
  it('inherited by an incarnation the operator never wrote a status for: recorded, nothing erased', async () => {
    const subject = sandbox('sbx')
      .finalized()
      .withReference(own)
      .withGuard()
      .withPods(1)
      .withAnnotation(ANNOTATIONS.eraseReferences, 'INC-1');
    const { calls } = await liveTurn(subject, [expect_('sandboxes.patchStatus(sbx)')]);
    expect(calls).not.toContain('references.deleteAll(sbx)');
  });

  it('inherited likewise when the status read is only the CRD default the API server fills in', async () => {
    const subject = sandbox('sbx')
      .finalized()
      .withReference(own)
      .withGuard()
      .withPods(1)
      .withStatus(UNOBSERVED_STATUS)
      .withAnnotation(ANNOTATIONS.eraseReferences, 'INC-1');
    const { calls } = await liveTurn(subject, [expect_('sandboxes.patchStatus(sbx)')]);
    expect(calls).not.toContain('references.deleteAll(sbx)');
  });

  it('writes a first status only on the Sandbox as read, an erase request seen or not', async () => {
    // On a cache that lags an administrator's annotation, a first status would record no erase, and the
    // annotation would then count as a request not yet acted on; the operator bounds refuse that write.
    for (const subject of [
      sandbox('sbx').finalized().withReference(own).withGuard().withPods(1),
      sandbox('sbx').finalized().withReference(own).withGuard().withPods(1).withStatus(UNOBSERVED_STATUS),
    ]) {
      subject.withMetadata({ resourceVersion: '17' });
      const script = new Script([expect_('sandboxes.patchStatus(sbx)')]);
      const { ctx, versions } = recordingStatusVersions(contextOf(subject.store(), script));
      await reconcileSandbox(ctx, 'ns/sbx', silent);
      script.finish();
      expect(versions).toEqual(['17']);
    }
  });

  it('raises the fence on the version it read, then erases, then records', async () => {
    const subject = running().withAnnotation(ANNOTATIONS.eraseReferences, 'INC-1');
    await liveTurn(subject, [
      expect_('sandboxes.patchMetadata(sbx)', { resourceVersion: '2' }),
      expect_('references.deleteAll(sbx)', deleted('own')),
      expect_('references.listLive(sbx)', listed([], 'sbx')),
      expect_('events.record(ReferencesErased)'),
      expect_('sandboxes.patchStatus(sbx)'),
    ]);
  });

  it('erases nothing when the fence conflicts: the cache was stale, the next turn reads again', async () => {
    const subject = running().withAnnotation(ANNOTATIONS.eraseReferences, 'INC-1');
    const stale = new KubeRequestError('Patch', 'sandbox ns/sbx', 409, { cause: new Error('conflict') });
    const { outcome, calls } = await liveTurn(subject, [failing('sandboxes.patchMetadata(sbx)', stale)]);
    expect(outcome).toEqual({ error: stale });
    expect(calls).not.toContain('references.deleteAll(sbx)');
  });
});
