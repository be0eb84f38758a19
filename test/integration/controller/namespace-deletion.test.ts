/**
 * Deleting a namespace deletes its references, budgets and Sandboxes; the operator must let it finish: no
 * guard re-creation or pod create refused by the terminating namespace may stand in the way of the release,
 * and an adopted sandbox with unknown history (no ledger) is released once no reference is left.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATIONS } from '../../../operator/api/names.ts';
import { kubeConfig } from '../../harness/kube.ts';
import { createReference, createSandbox, getSandbox, untilSandbox } from './fixtures.ts';
import { eventually, grantOperatorRbac, startOperator, type RunningOperator } from './operator.ts';

const namespace = `ns-deletion-${randomBytes(4).toString('hex')}`;
const core = () => kubeConfig().makeApiClient(CoreV1Api);
let operator: RunningOperator;

beforeAll(async () => {
  await core().createNamespace({ body: { metadata: { name: namespace } } });
  await grantOperatorRbac();
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator.stop();
});

describe('a namespace being deleted', () => {
  it('finishes: its shared, exclusive and adopted sandboxes are released once its references are gone', async () => {
    await createSandbox(namespace, 'shared', { worktree: 'wt-1' });
    await createReference(namespace, 'board', {
      sandbox: 'shared',
      session: 'workspace_9',
      worktree: 'wt-2',
    });
    await createSandbox(namespace, 'own', { worktree: 'wt-1' });
    // Adopted, and no ledger configured: Unavailable, which only the namespace's deletion lifts.
    await createSandbox(namespace, 'adopted', {
      worktree: 'wt-1',
      annotations: { [ANNOTATIONS.adoptedFrom]: 'cloud-agent v1' },
    });
    await untilSandbox(
      namespace,
      'shared',
      'shared running',
      (sandbox) => sandbox.status?.phase === 'Running',
    );
    await untilSandbox(namespace, 'own', 'own running', (sandbox) => sandbox.status?.phase === 'Running');
    await core().deleteNamespace({ name: namespace });
    await eventually(
      'the namespace gone',
      async () => {
        try {
          await core().readNamespace({ name: namespace });
          return undefined;
        } catch (error) {
          if ((error as { code?: number }).code === 404) return true;
          throw error;
        }
      },
      90_000,
    );
    expect(await getSandbox(namespace, 'shared')).toBeUndefined();
    expect(await getSandbox(namespace, 'adopted')).toBeUndefined();
  });
});
