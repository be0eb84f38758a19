/**
 * Pods whose Sandbox no longer exists (issue 25, #6), through scripted ports: released only where the
 * namespace is being deleted, and only once the API server confirms the Sandbox is gone.
 */
import { describe, expect, it } from 'vitest';
import { reconcileSandbox } from '../../../operator/controller/sandbox-reconciler.ts';
import type { Action } from '../../../operator/runtime/action.ts';
import { NAMESPACE, sandbox, type SandboxBuilder } from '../builders.ts';
import { contextOf, expect_, Script, silent } from './scripted-ports.ts';
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import type { ClaimHolder } from '../../../operator/controller/claims.ts';

/** A workspace claim of sbx as a LIST returns it: labelled, controlled by the Sandbox, holding our finalizer. */
const claim = (name: string, over: Partial<ClaimHolder> = {}): ClaimHolder => ({
  name,
  uid: `uid-${name}`,
  resourceVersion: '7',
  sandboxLabel: 'sbx',
  labelled: true,
  controller: { kind: 'Sandbox', name: 'sbx', uid: 'uid-sbx' },
  ownerReferences: [],
  finalizers: [EXCLUSIVITY_FINALIZER],
  deleting: false,
  ...over,
});

/** A reconcile of `subject`'s key with a cache that holds its pods but not the Sandbox itself. */
async function orphanTurn(
  subject: SandboxBuilder,
  expected: ConstructorParameters<typeof Script>[0],
  heldClaims: readonly string[] = [],
) {
  const script = new Script(expected);
  const store = { ...subject.store(), sandbox: () => undefined };
  const action: Action = await reconcileSandbox(
    contextOf(store, script, { heldClaims }),
    `${NAMESPACE}/${subject.name}`,
    silent,
  );
  script.finish();
  return action;
}

describe('pods of a Sandbox that no longer exists', () => {
  it('are deleted and freed of the finalizer in a namespace being deleted', async () => {
    const subject = sandbox('sbx').withPods(2);
    const action = await orphanTurn(subject, [
      expect_('sandboxes.readLive(sbx)', undefined),
      expect_(`namespaces.isTerminating(${NAMESPACE})`, true),
      expect_('pods.delete(sbx-0)'),
      expect_('pods.patchMetadata(sbx-0)'),
      expect_('pods.delete(sbx-1)'),
      expect_('pods.patchMetadata(sbx-1)'),
      expect_('claims.listLive(sbx)', []), // no workspace claims: nothing more
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('are kept anywhere else: nothing is decided without their Sandbox', async () => {
    const subject = sandbox('sbx').withPods(1);
    const action = await orphanTurn(subject, [
      expect_('sandboxes.readLive(sbx)', undefined),
      expect_(`namespaces.isTerminating(${NAMESPACE})`, false),
    ]);
    expect(action).toEqual({ kind: 'RequeueAfter', ms: 600_000 });
  });

  it('are left to the Sandbox’s own turn when the API server still holds it (the cache lags)', async () => {
    const subject = sandbox('sbx').withPods(1);
    const action = await orphanTurn(subject, [
      expect_('sandboxes.readLive(sbx)', {
        uid: 'uid-sbx',
        deleting: true,
        finalizers: [EXCLUSIVITY_FINALIZER],
      }),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('are released before the workspace claims, which go with them', async () => {
    const subject = sandbox('sbx').withPods(1);
    const action = await orphanTurn(subject, [
      expect_('sandboxes.readLive(sbx)', undefined),
      expect_(`namespaces.isTerminating(${NAMESPACE})`, true),
      expect_('pods.delete(sbx-0)'),
      expect_('pods.patchMetadata(sbx-0)'),
      expect_('claims.listLive(sbx)', [claim('workspace-sbx')]),
      expect_('sandboxes.readLive(sbx)', undefined),
      expect_('claims.delete(workspace-sbx)'),
      expect_('claims.patchMetadata(workspace-sbx)'),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('cost nothing once released: only their going is awaited', async () => {
    const subject = sandbox('sbx').withPods(1, { deleting: true, finalizers: [] });
    expect(await orphanTurn(subject, [])).toEqual({ kind: 'AwaitChange' });
  });
});

describe('workspace claims of a Sandbox that no longer exists, without a pod (suspended, or released)', () => {
  const gone = (expected: ConstructorParameters<typeof Script>[0]) =>
    orphanTurn(sandbox('sbx'), expected, [`${NAMESPACE}/sbx`]);

  it('cost nothing when the claim watch shows none holding our finalizer (a released sandbox)', async () => {
    expect(await orphanTurn(sandbox('sbx'), [])).toEqual({ kind: 'AwaitChange' });
  });

  it('are deleted and freed of the finalizer in a namespace being deleted (it would wait on them for ever)', async () => {
    expect(
      await gone([
        expect_(`namespaces.isTerminating(${NAMESPACE})`, true),
        expect_('claims.listLive(sbx)', [claim('workspace-sbx'), claim('kept-sbx', { finalizers: [] })]),
        expect_('sandboxes.readLive(sbx)', undefined),
        expect_('claims.delete(workspace-sbx)'),
        expect_('claims.patchMetadata(workspace-sbx)'),
      ]),
    ).toEqual({ kind: 'AwaitChange' });
  });

  it('are not even listed anywhere else, and left to a Sandbox the API server still holds', async () => {
    expect(await gone([expect_(`namespaces.isTerminating(${NAMESPACE})`, false)])).toEqual({
      kind: 'AwaitChange',
    });
    expect(
      await gone([
        expect_(`namespaces.isTerminating(${NAMESPACE})`, true),
        expect_('claims.listLive(sbx)', [claim('workspace-sbx')]),
        expect_('sandboxes.readLive(sbx)', {
          uid: 'uid-sbx',
          deleting: true,
          finalizers: [EXCLUSIVITY_FINALIZER],
        }),
      ]),
    ).toEqual({ kind: 'AwaitChange' });
  });

  it('once deleting, are only freed of the finalizer', async () => {
    expect(
      await gone([
        expect_(`namespaces.isTerminating(${NAMESPACE})`, true),
        expect_('claims.listLive(sbx)', [claim('workspace-sbx', { deleting: true })]),
        expect_('sandboxes.readLive(sbx)', undefined),
        expect_('claims.patchMetadata(workspace-sbx)'),
      ]),
    ).toEqual({ kind: 'AwaitChange' });
  });
});

/**
 * Found by the soak (seed 20261201 on 406b780): a Sandbox deleted with Orphan propagation keeps the `orphan`
 * finalizer until the garbage collector has orphaned its pods, which pod protection refuses it; with our
 * finalizer stripped while the namespace terminates, nothing was left to release the pods, and the namespace
 * never went. Such a Sandbox's deletion is no longer ours: in a terminating namespace it is as good as gone.
 */
describe('pods of a deleting Sandbox whose exclusivity finalizer was stripped, another finalizer keeping it', () => {
  const stripped = () =>
    sandbox('sbx')
      .withPods(1)
      .withMetadata({ deletionTimestamp: '2026-11-30T12:00:00Z', finalizers: ['orphan'] });
  const liveStripped = { uid: 'uid-sbx', deleting: true, finalizers: ['orphan'] };

  async function turn(subject: SandboxBuilder, expected: ConstructorParameters<typeof Script>[0]) {
    const script = new Script(expected);
    const action = await reconcileSandbox(
      contextOf(subject.store(), script),
      `${NAMESPACE}/${subject.name}`,
      silent,
    );
    script.finish();
    return action;
  }

  it('are released in a namespace being deleted, as if it were gone', async () => {
    const action = await turn(stripped(), [
      expect_('sandboxes.readLive(sbx)', liveStripped),
      expect_(`namespaces.isTerminating(${NAMESPACE})`, true),
      expect_('pods.delete(sbx-0)'),
      expect_('pods.patchMetadata(sbx-0)'),
      expect_('claims.listLive(sbx)', []),
    ]);
    expect(action).toEqual({ kind: 'AwaitChange' });
  });

  it('are kept anywhere else, and left to the Sandbox’s turn once the API server shows our finalizer', async () => {
    expect(
      await turn(stripped(), [
        expect_('sandboxes.readLive(sbx)', liveStripped),
        expect_(`namespaces.isTerminating(${NAMESPACE})`, false),
      ]),
    ).toEqual({ kind: 'RequeueAfter', ms: 600_000 });
    expect(
      await turn(stripped(), [
        expect_('sandboxes.readLive(sbx)', {
          ...liveStripped,
          finalizers: ['orphan', EXCLUSIVITY_FINALIZER],
        }),
      ]),
    ).toEqual({ kind: 'AwaitChange' });
  });
});
