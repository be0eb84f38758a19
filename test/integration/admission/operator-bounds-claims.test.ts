/**
 * The operator's identity and workspace claims (issue 27): the restricted `sandbox-operator` user under the
 * chart's RBAC may create only claims labelled for a Sandbox, controlled by it and finalized; change only a
 * sandbox claim's guards (never its spec or annotations); and delete only claims a Sandbox owns. A leaked
 * operator token can therefore not delete a tenant's other volumes.
 */
import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXCLUSIVITY_FINALIZER, LABELS } from '../../../operator/api/names.ts';
import { kubeConfig, testNamespace } from '../../harness/kube.ts';
import { createSandbox, getSandbox } from '../controller/fixtures.ts';
import { core, grantOperatorRbac } from '../controller/operator.ts';

const namespace = testNamespace('operator-bounds-claims');
const asOperator = () => kubeConfig({ restricted: true }).makeApiClient(CoreV1Api);
const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
let owner: { apiVersion: string; kind: string; name: string; uid: string; controller: boolean };

beforeAll(async () => {
  await grantOperatorRbac();
  await createSandbox(namespace, 'bounded', { worktree: 'wt-1' });
  owner = {
    apiVersion: 'sandbox.agents.dev/v1alpha1',
    kind: 'Sandbox',
    name: 'bounded',
    uid: (await getSandbox(namespace, 'bounded'))?.metadata.uid ?? '',
    controller: true,
  };
});

function claim(name: string, metadata: Partial<NonNullable<V1PersistentVolumeClaim['metadata']>> = {}) {
  return {
    metadata: { name, namespace, ...metadata },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
  };
}
const sandboxClaim = (name: string) =>
  claim(name, {
    labels: { [LABELS.sandbox]: 'bounded' },
    finalizers: [EXCLUSIVITY_FINALIZER],
    ownerReferences: [owner],
  });

const outcome = (call: Promise<unknown>) =>
  call.then(
    () => 'allowed',
    (error: unknown) => String((error as { body?: unknown }).body ?? error),
  );
const patchAs = (name: string, ops: object[]) =>
  outcome(asOperator().patchNamespacedPersistentVolumeClaim({ namespace, name, body: ops }, JSON_PATCH));

describe('the operator’s identity and claims', () => {
  it('creates a labelled claim controlled by a Sandbox, with its finalizer; nothing else', async () => {
    expect(
      await outcome(
        asOperator().createNamespacedPersistentVolumeClaim({ namespace, body: sandboxClaim('work-bounded') }),
      ),
    ).toBe('allowed');
    for (const body of [
      claim('plain'),
      claim('unowned', { labels: { [LABELS.sandbox]: 'bounded' }, finalizers: [EXCLUSIVITY_FINALIZER] }),
      claim('unfinalized', { labels: { [LABELS.sandbox]: 'bounded' }, ownerReferences: [owner] }),
    ])
      expect(
        await outcome(asOperator().createNamespacedPersistentVolumeClaim({ namespace, body })),
      ).toContain('the operator may create only persistentvolumeclaims labelled');
  });

  it('changes a sandbox claim’s guards but never its annotations', async () => {
    expect(
      await patchAs('work-bounded', [
        {
          op: 'test',
          path: '/metadata/finalizers',
          value: [EXCLUSIVITY_FINALIZER, 'kubernetes.io/pvc-protection'],
        },
        { op: 'add', path: '/metadata/finalizers', value: ['kubernetes.io/pvc-protection'] },
      ]),
    ).toBe('allowed');
    expect(
      await patchAs('work-bounded', [{ op: 'add', path: '/metadata/annotations', value: { x: 'y' } }]),
    ).toContain('the operator may change only the label, finalizer and owner references of a sandbox claim');
  });

  it('deletes a sandbox claim, and no other claim', async () => {
    await core().createNamespacedPersistentVolumeClaim({ namespace, body: claim('tenant-data') });
    expect(
      await outcome(asOperator().deleteNamespacedPersistentVolumeClaim({ namespace, name: 'tenant-data' })),
    ).toContain('the operator may delete only sandbox claims');
    expect(
      await outcome(asOperator().deleteNamespacedPersistentVolumeClaim({ namespace, name: 'work-bounded' })),
    ).toBe('allowed');
  });
});
