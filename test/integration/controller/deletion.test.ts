/**
 * The exclusivity decision end to end, against the real API server: the three directions, a blocked deletion
 * finishing by itself, and the admission guard on every other deletion path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../../operator/api/names.ts';
import { testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteReference,
  deleteSandbox,
  untilSandbox,
  sandboxGone,
} from './fixtures.ts';
import { core, grantOperatorRbac, startOperator, type RunningOperator } from './operator.ts';

const namespace = testNamespace('deletion');
let operator: RunningOperator;

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator.stop();
});

const podsOf = async (sandbox: string) =>
  (await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` })).items;

async function runningSandbox(name: string, worktree: string) {
  await createSandbox(namespace, name, { worktree });
  return untilSandbox(
    namespace,
    name,
    `sandbox ${name} running`,
    (sandbox) => sandbox.status?.phase === 'Running',
  );
}

describe('deleting a sandbox', () => {
  it('keeps the pods while a foreign session is attached', async () => {
    const sandbox = await runningSandbox('attached-foreign', 'wt-1');
    expect(sandbox.metadata.finalizers).toContain('sandbox.agents.dev/exclusivity');
    expect(sandbox.status?.reconciliation).toMatchObject({ state: 'NotRequired', marker: true });
    await createReference(namespace, 'own', {
      sandbox: 'attached-foreign',
      session: 'workspace_1',
      worktree: 'wt-1',
    });
    await createReference(namespace, 'foreign', {
      sandbox: 'attached-foreign',
      session: 'workspace_2',
      worktree: 'wt-2',
    });
    await untilSandbox(
      namespace,
      'attached-foreign',
      'references counted',
      (sandbox) => sandbox.status?.references?.attached === 2,
    );
    await deleteSandbox(namespace, 'attached-foreign');
    const blocked = await untilSandbox(
      namespace,
      'attached-foreign',
      'deletion blocked',
      (sandbox) => sandbox.status?.phase === 'Blocked',
    );
    expect(blocked.status?.decision).toMatchObject({
      verdict: 'Foreign',
      evidence: 'Index',
      blockingReferences: ['foreign'],
    });
    const condition = blocked.status?.conditions?.find((c) => c.type === 'DeletionBlocked');
    expect(condition).toMatchObject({ status: 'True' });
    expect(condition?.message).toContain('foreign');
    const pods = await podsOf('attached-foreign');
    expect(pods).toHaveLength(1);
    expect(pods[0]?.metadata?.deletionTimestamp).toBeUndefined();
  });

  it('keeps the pods while a foreign tombstone remains, and finishes by itself once it is forgotten', async () => {
    await runningSandbox('tombstone-foreign', 'wt-1');
    await createReference(namespace, 'gone-foreign', {
      sandbox: 'tombstone-foreign',
      session: 'workspace_3',
      worktree: 'wt-9',
      state: 'Detached',
    });
    await createReference(namespace, 'gone-own', {
      sandbox: 'tombstone-foreign',
      session: 'workspace_4',
      worktree: 'wt-1',
      state: 'Detached',
    });
    await untilSandbox(
      namespace,
      'tombstone-foreign',
      'tombstones counted',
      (sandbox) => sandbox.status?.references?.detached === 2,
    );
    await deleteSandbox(namespace, 'tombstone-foreign');
    const blocked = await untilSandbox(
      namespace,
      'tombstone-foreign',
      'deletion blocked',
      (sandbox) => sandbox.status?.phase === 'Blocked',
    );
    expect(blocked.status?.decision).toMatchObject({
      verdict: 'Foreign',
      blockingReferences: ['gone-foreign'],
    });
    expect((await podsOf('tombstone-foreign'))[0]?.metadata?.deletionTimestamp).toBeUndefined();
    // The worktree's own tombstone was pruned by the decision; the foreign one stays until forgotten.
    await untilSandbox(
      namespace,
      'tombstone-foreign',
      'own tombstone pruned',
      (sandbox) => sandbox.status?.references?.detached === 1,
    );

    await deleteReference(namespace, 'gone-foreign');
    await sandboxGone(namespace, 'tombstone-foreign');
    expect(await podsOf('tombstone-foreign')).toHaveLength(0);
  });

  it('destroys the pods when no reference is foreign', async () => {
    await runningSandbox('exclusive', 'wt-1');
    await createReference(namespace, 'mine', {
      sandbox: 'exclusive',
      session: 'workspace_5',
      worktree: 'wt-1',
    });
    await untilSandbox(
      namespace,
      'exclusive',
      'reference counted',
      (sandbox) => sandbox.status?.references?.attached === 1,
    );
    await deleteSandbox(namespace, 'exclusive');
    await sandboxGone(namespace, 'exclusive');
    expect(await podsOf('exclusive')).toHaveLength(0);
  });
});
