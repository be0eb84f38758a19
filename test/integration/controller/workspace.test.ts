/**
 * The persistent workspace against a real API server (issue 27): the operator makes each claim before the pods
 * with the sandbox's guards, mounts it by the template's name, puts stripped guards back, says so when someone
 * else holds the claim's name; admission keeps tenants from deleting or unguarding a claim; and the release
 * deletes the claims after the pods (Delete) or frees and keeps them (Retain), and only on an Exclusive verdict.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  GROUP,
  LABELS,
  SANDBOX,
  VERSION,
} from '../../../operator/api/names.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  deleteReference,
  deleteSandbox,
  getSandbox,
  sandboxGone,
  sandboxManifest,
  untilSandbox,
} from './fixtures.ts';
import {
  core,
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('workspace');
let operator: RunningOperator;

const template = {
  metadata: { name: 'work' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
};

async function createWithWorkspace(name: string, whenDeleted: 'Delete' | 'Retain' = 'Delete') {
  const manifest = sandboxManifest(namespace, name, { worktree: 'wt-1' });
  const [agent] = manifest.spec.podTemplate.spec.containers;
  await customObjects().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX.plural,
    body: {
      ...manifest,
      spec: {
        ...manifest.spec,
        podTemplate: {
          spec: {
            ...manifest.spec.podTemplate.spec,
            containers: [{ ...agent, volumeMounts: [{ name: 'work', mountPath: '/workspace' }] }],
          },
        },
        volumeClaimTemplates: [template],
        persistentVolumeClaimRetentionPolicy: { whenDeleted },
      },
    },
  });
}

const claim = async (name: string): Promise<V1PersistentVolumeClaim | undefined> =>
  core()
    .readNamespacedPersistentVolumeClaim({ namespace, name })
    .catch((error: unknown) => {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    });

const untilClaim = (name: string, what: string, wanted: (claim: V1PersistentVolumeClaim) => boolean) =>
  eventually(what, async () => {
    const found = await claim(name);
    return found !== undefined && wanted(found) ? found : pending({ metadata: found?.metadata });
  });

const pods = async (sandbox: string) =>
  (await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` })).items;

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
  await createWithWorkspace('kept');
  await untilSandbox(namespace, 'kept', 'kept running', (s) => s.status?.phase === 'Running');
});
afterAll(async () => {
  await operator.stop();
});

describe('a sandbox with a persistent workspace', () => {
  it('has its claim, labelled, finalized and controlled by the Sandbox, mounted by the template name', async () => {
    const sandbox = await getSandbox(namespace, 'kept');
    const found = await claim('work-kept');
    expect(found?.metadata?.labels?.[LABELS.sandbox]).toBe('kept');
    expect(found?.metadata?.finalizers).toContain(EXCLUSIVITY_FINALIZER);
    expect(found?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        apiVersion: API_VERSION,
        kind: 'Sandbox',
        name: 'kept',
        uid: sandbox?.metadata.uid,
        controller: true,
      }),
    ]);
    expect(found?.spec?.resources?.requests?.['storage']).toBe('1Mi');
    const [pod] = await pods('kept');
    expect(pod?.spec?.volumes).toContainEqual({
      name: 'work',
      persistentVolumeClaim: { claimName: 'work-kept' },
    });
    // Made before the pod: the claim is older (or as old, to the second) and its uid was in place when the pod was.
    expect(Date.parse(String(found?.metadata?.creationTimestamp))).toBeLessThanOrEqual(
      Date.parse(String(pod?.metadata?.creationTimestamp)),
    );
  });

  it('refuses a tenant’s delete, relabel and finalizer strip, naming the sandbox and the override', async () => {
    const deleted = await kubectl(['delete', 'pvc', 'work-kept', '-n', namespace, '--wait=false']);
    expect(deleted.exitCode).not.toBe(0);
    expect(deleted.stderr).toContain('persistentvolumeclaim work-kept is the workspace of Sandbox kept');
    expect(deleted.stderr).toContain(ANNOTATIONS.deletionOverride);

    const relabelled = await kubectl([
      'label',
      'pvc',
      'work-kept',
      '-n',
      namespace,
      `${LABELS.sandbox}=other`,
      '--overwrite',
    ]);
    expect(relabelled.exitCode).not.toBe(0);
    expect(relabelled.stderr).toContain(`metadata.labels[${LABELS.sandbox}]`);

    const stripped = await kubectl([
      'patch',
      'pvc',
      'work-kept',
      '-n',
      namespace,
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'replace', path: '/metadata/finalizers', value: ['kubernetes.io/pvc-protection'] },
      ]),
    ]);
    expect(stripped.exitCode).not.toBe(0);
    expect(stripped.stderr).toContain(
      `metadata.finalizers[${EXCLUSIVITY_FINALIZER}] may be changed only by the sandbox operator`,
    );

    const squatter = await kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: 'squatted',
          namespace,
          labels: { [LABELS.sandbox]: 'kept' },
          ownerReferences: [
            {
              apiVersion: API_VERSION,
              kind: 'Sandbox',
              name: 'kept',
              uid: (await getSandbox(namespace, 'kept'))?.metadata.uid,
              controller: true,
            },
          ],
        },
        spec: template.spec,
      }),
    });
    expect(squatter.exitCode).not.toBe(0);
    expect(squatter.stderr).toContain('only the sandbox operator creates claims owned by a Sandbox');
    expect((await claim('work-kept'))?.metadata?.deletionTimestamp).toBeUndefined();
  });

  it('puts back a finalizer and label stripped under the override', async () => {
    await kubectlOk([
      'annotate',
      'pvc',
      'work-kept',
      '-n',
      namespace,
      `${ANNOTATIONS.deletionOverride}=test: strip the guards`,
    ]);
    await kubectlOk([
      'patch',
      'pvc',
      'work-kept',
      '-n',
      namespace,
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'replace', path: '/metadata/finalizers', value: ['kubernetes.io/pvc-protection'] },
        { op: 'remove', path: `/metadata/labels/${LABELS.sandbox.replace('/', '~1')}` },
      ]),
    ]);
    // Any change of the Sandbox brings a turn (the resync would, later).
    await kubectlOk(['annotate', 'sandboxes.sandbox.agents.dev', 'kept', '-n', namespace, 'touched=1']);
    const repaired = await untilClaim(
      'work-kept',
      'claim guards re-established',
      (c) =>
        c.metadata?.finalizers?.includes(EXCLUSIVITY_FINALIZER) === true &&
        c.metadata.labels?.[LABELS.sandbox] === 'kept',
    );
    // Only what was stripped comes back: the claim's other labels and finalizers stay.
    expect(repaired.metadata?.finalizers).toContain('kubernetes.io/pvc-protection');
    expect(repaired.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('sandbox-operator');
  });

  it('lets an administrator reset the workspace: a claim deleted under the override goes, and a new one comes', async () => {
    await createWithWorkspace('reset');
    await untilSandbox(namespace, 'reset', 'reset running', (s) => s.status?.phase === 'Running');
    const old = await claim('work-reset');
    await kubectlOk([
      'annotate',
      'pvc',
      'work-reset',
      '-n',
      namespace,
      `${ANNOTATIONS.deletionOverride}=test: reset`,
    ]);
    await kubectlOk(['delete', 'pvc', 'work-reset', '-n', namespace, '--wait=false']);
    // Freed of our finalizer; the pod that mounts it still holds it (kubernetes.io/pvc-protection).
    await untilClaim(
      'work-reset',
      'the deleted claim freed',
      (c) =>
        c.metadata?.deletionTimestamp !== undefined &&
        !c.metadata.finalizers?.includes(EXCLUSIVITY_FINALIZER),
    );
    const [pod] = await pods('reset');
    await kubectlOk([
      'annotate',
      'pod',
      pod?.metadata?.name ?? '',
      '-n',
      namespace,
      `${ANNOTATIONS.deletionOverride}=test: reset`,
    ]);
    await kubectlOk(['delete', 'pod', pod?.metadata?.name ?? '', '-n', namespace, '--wait=false']);
    const fresh = await untilClaim(
      'work-reset',
      'a new claim',
      (c) => c.metadata?.uid !== old?.metadata?.uid && c.metadata?.deletionTimestamp === undefined,
    );
    expect(fresh.metadata?.finalizers).toContain(EXCLUSIVITY_FINALIZER);
    await eventually('a new pod on it', async () => {
      const [again] = await pods('reset');
      return again !== undefined && again.metadata?.uid !== pod?.metadata?.uid
        ? again
        : pending({ pod: again?.metadata?.uid });
    });
  });

  it('creates no pod while another claim holds the claim name, and says how to free it', async () => {
    await kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'work-held', namespace },
        spec: template.spec,
      }),
    });
    await createWithWorkspace('held');
    const sandbox = await untilSandbox(namespace, 'held', 'Misconfigured', (s) =>
      (s.status?.conditions ?? []).some((c) => c.type === 'Misconfigured' && c.status === 'True'),
    );
    const condition = sandbox.status?.conditions?.find((c) => c.type === 'Misconfigured');
    expect(condition?.reason).toBe('ClaimNameTaken');
    expect(condition?.message).toContain('delete or rename persistentvolumeclaim work-held');
    expect(await pods('held')).toEqual([]);
    await kubectlOk(['delete', 'pvc', 'work-held', '-n', namespace]);
    await kubectlOk(['annotate', 'sandboxes.sandbox.agents.dev', 'held', '-n', namespace, 'touched=1']);
    await eventually('pod once the name is free', async () =>
      (await pods('held')).length > 0 ? true : pending({}),
    );
    expect((await claim('work-held'))?.metadata?.labels?.[LABELS.sandbox]).toBe('held');
  });
});

describe('the release of a sandbox with a persistent workspace', () => {
  it('keeps the claim while a foreign reference blocks, then deletes it after the pods (Delete)', async () => {
    await createWithWorkspace('shared');
    await untilSandbox(namespace, 'shared', 'shared running', (s) => s.status?.phase === 'Running');
    await createReference(namespace, 'shared-foreign', {
      sandbox: 'shared',
      session: 'workspace_9',
      worktree: 'wt-2',
    });
    await untilSandbox(namespace, 'shared', 'foreign indexed', (s) => s.status?.references?.foreign === 1);
    await deleteSandbox(namespace, 'shared');
    await untilSandbox(namespace, 'shared', 'blocked', (s) => s.status?.phase === 'Blocked');
    const blocked = await claim('work-shared');
    expect(blocked?.metadata?.deletionTimestamp).toBeUndefined();
    expect(blocked?.metadata?.finalizers).toContain(EXCLUSIVITY_FINALIZER);

    await deleteReference(namespace, 'shared-foreign');
    await sandboxGone(namespace, 'shared');
    expect(await pods('shared')).toEqual([]);
    await eventually('claim deleted', async () =>
      (await claim('work-shared')) === undefined ? true : pending({}),
    );
  });

  it('frees and keeps the claim (Retain): no finalizer, no owner, still there', async () => {
    await createWithWorkspace('retained', 'Retain');
    await untilSandbox(namespace, 'retained', 'retained running', (s) => s.status?.phase === 'Running');
    const before = await claim('work-retained');
    await deleteSandbox(namespace, 'retained');
    await sandboxGone(namespace, 'retained');
    const kept = await claim('work-retained');
    expect(kept?.metadata?.uid).toBe(before?.metadata?.uid);
    expect(kept?.metadata?.deletionTimestamp).toBeUndefined();
    expect(kept?.metadata?.finalizers ?? []).not.toContain(EXCLUSIVITY_FINALIZER);
    expect(kept?.metadata?.ownerReferences ?? []).toEqual([]);
    expect(kept?.metadata?.labels?.[LABELS.sandbox]).toBe('retained');

    // A Sandbox of the same name takes the retained workspace over.
    await createWithWorkspace('retained', 'Retain');
    const sandbox = await untilSandbox(
      namespace,
      'retained',
      'again running',
      (s) => s.status?.phase === 'Running',
    );
    const adopted = await untilClaim(
      'work-retained',
      'claim adopted',
      (c) => (c.metadata?.ownerReferences ?? []).length > 0,
    );
    expect(adopted.metadata?.uid).toBe(before?.metadata?.uid);
    expect(adopted.metadata?.ownerReferences?.[0]?.uid).toBe(sandbox.metadata.uid);
    expect(adopted.metadata?.finalizers).toContain(EXCLUSIVITY_FINALIZER);
  });
});
