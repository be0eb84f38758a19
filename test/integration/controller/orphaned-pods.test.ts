/**
 * A terminating namespace whose Sandbox lost its finalizer (guard protection allows stripping it while the
 * namespace terminates) before the operator released its pods (issue 25, #6): the pods, still holding our
 * finalizer and refused to everyone else's DELETE, belong to a Sandbox that no longer exists. The operator
 * releases them, and the namespace finishes. The operator is down while the finalizer goes, so the race
 * with an ordinary release is forced, not hoped for.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../../operator/api/names.ts';
import { kubeConfig, kubectlOk } from '../../harness/kube.ts';
import { createReference, createSandbox, getSandbox, untilSandbox } from './fixtures.ts';
import { eventually, grantOperatorRbac, pending, startOperator, type RunningOperator } from './operator.ts';

const namespace = `orphans-${randomBytes(4).toString('hex')}`;
const core = () => kubeConfig().makeApiClient(CoreV1Api);
let operator: RunningOperator | undefined;

beforeAll(async () => {
  await core().createNamespace({ body: { metadata: { name: namespace } } });
  await grantOperatorRbac();
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator?.stop();
});

const namespaceGone = async () => {
  try {
    await core().readNamespace({ name: namespace });
    return pending({ namespace: 'still there' });
  } catch (error) {
    if ((error as { code?: number }).code === 404) return true;
    throw error;
  }
};

describe('a terminating namespace whose Sandbox lost its finalizer', () => {
  it('finishes: the operator releases the pods of the Sandbox that no longer exists', async () => {
    await createSandbox(namespace, 'shared', { worktree: 'wt-1' });
    await createReference(namespace, 'board', {
      sandbox: 'shared',
      session: 'workspace_9',
      worktree: 'wt-2',
    });
    await untilSandbox(namespace, 'shared', 'running', (sandbox) => sandbox.status?.phase === 'Running');
    await operator?.stop();
    operator = undefined;

    await core().deleteNamespace({ name: namespace });
    await eventually('the Sandbox being deleted', async () => {
      const sandbox = await getSandbox(namespace, 'shared');
      return sandbox?.metadata.deletionTimestamp !== undefined ? true : pending({ sandbox: 'not deleting' });
    });
    await kubectlOk([
      'patch',
      'sandbox',
      'shared',
      '-n',
      namespace,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    await eventually('the Sandbox gone', async () =>
      (await getSandbox(namespace, 'shared')) === undefined ? true : pending({ sandbox: 'still there' }),
    );
    const pods = await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=shared` });
    expect(pods.items.length).toBeGreaterThan(0); // held by our finalizer, their Sandbox gone

    operator = startOperator(namespace);
    await eventually('the namespace gone', namespaceGone, 60_000);
  });
});
