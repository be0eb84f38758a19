/**
 * The pod-protection policy against the attacks of issues 9 (#5) and 15, with the real API server and the
 * operator creating the pods: a relabel (or a finalizer or owner edit) that would let a plain delete through,
 * a deletion override pre-set by the Sandbox's template, and label squatting.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER, LABELS } from '../../../operator/api/names.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteSandbox,
  getSandbox,
  sandboxManifest,
  untilSandbox,
  sandboxGone,
} from '../controller/fixtures.ts';
import {
  core,
  customObjects,
  eventually,
  pending,
  grantOperatorRbac,
  startOperator,
  type RunningOperator,
} from '../controller/operator.ts';

const namespace = testNamespace('pod-protection');
let operator: RunningOperator;

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator.stop();
});

/** A running sandbox whose pod a foreign session keeps: nothing but the operator may remove it. */
async function sharedSandboxPod(name: string): Promise<V1Pod> {
  await createSandbox(namespace, name, { worktree: 'wt-1' });
  await createReference(namespace, `${name}-foreign`, {
    sandbox: name,
    session: 'workspace_9',
    worktree: 'wt-2',
  });
  return eventually(`pod of ${name}`, async () => {
    const pods = await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${name}` });
    const pod = pods.items[0];
    return pod?.metadata?.finalizers?.includes(EXCLUSIVITY_FINALIZER)
      ? pod
      : pending({ pod: pod?.metadata?.name, finalizers: pod?.metadata?.finalizers });
  });
}

const podExists = async (name: string) =>
  (await core().listNamespacedPod({ namespace })).items.some(
    (pod) => pod.metadata?.name === name && pod.metadata.deletionTimestamp === undefined,
  );

describe('a shared sandbox pod', () => {
  it('refuses removing its sandbox label, so relabel-then-delete cannot kill it', async () => {
    const name = (await sharedSandboxPod('relabel')).metadata?.name ?? '';
    const relabel = await kubectl(['label', 'pod', name, '-n', namespace, `${LABELS.sandbox}-`]);
    expect(relabel.exitCode).not.toBe(0);
    expect(relabel.stderr).toContain(`metadata.labels[${LABELS.sandbox}]`);
    await kubectl(['delete', 'pod', name, '-n', namespace, '--wait=false']);
    expect(await podExists(name)).toBe(true);
  });

  it('refuses changing its sandbox label, removing the operator’s finalizer, or its owner references', async () => {
    const name = (await sharedSandboxPod('metadata')).metadata?.name ?? '';
    const attempts = [
      ['label', 'pod', name, '-n', namespace, '--overwrite', `${LABELS.sandbox}=other`],
      [
        'patch',
        'pod',
        name,
        '-n',
        namespace,
        '--type=json',
        '-p',
        '[{"op":"remove","path":"/metadata/finalizers"}]',
      ],
      [
        'patch',
        'pod',
        name,
        '-n',
        namespace,
        '--type=json',
        '-p',
        '[{"op":"remove","path":"/metadata/ownerReferences"}]',
      ],
    ];
    for (const attempt of attempts) {
      const result = await kubectl(attempt);
      expect(result.exitCode, attempt.join(' ')).not.toBe(0);
      expect(result.stderr).toContain(ANNOTATIONS.deletionOverride);
    }
    const pod = await core().readNamespacedPod({ namespace, name });
    expect(pod.metadata?.labels?.[LABELS.sandbox]).toBe('metadata');
    expect(pod.metadata?.finalizers).toContain(EXCLUSIVITY_FINALIZER);
    expect(pod.metadata?.ownerReferences?.[0]?.kind).toBe('Sandbox');
  });

  it('refuses the same changes through the status subresource (a pods/status writer: a node, a bot)', async () => {
    const name = (await sharedSandboxPod('status-writer')).metadata?.name ?? '';
    const viaStatus = (patch: string) => [
      'patch',
      'pod',
      name,
      '-n',
      namespace,
      '--subresource=status',
      '--type=json',
      '-p',
      patch,
    ];
    const label = LABELS.sandbox.replace('/', '~1');
    const attempts = [
      viaStatus(`[{"op":"remove","path":"/metadata/labels/${label}"}]`),
      viaStatus(`[{"op":"replace","path":"/metadata/labels/${label}","value":"other"}]`),
      viaStatus('[{"op":"remove","path":"/metadata/finalizers"}]'),
    ];
    for (const attempt of attempts) {
      const result = await kubectl(attempt);
      expect(result.exitCode, attempt.join(' ')).not.toBe(0);
      expect(result.stderr).toContain(ANNOTATIONS.deletionOverride);
    }
    const pod = await core().readNamespacedPod({ namespace, name });
    expect(pod.metadata?.labels?.[LABELS.sandbox]).toBe('status-writer');
    expect(pod.metadata?.finalizers).toContain(EXCLUSIVITY_FINALIZER);
  });

  it('lets other labels and annotations change', async () => {
    const name = (await sharedSandboxPod('other-metadata')).metadata?.name ?? '';
    await kubectlOk(['label', 'pod', name, '-n', namespace, 'team=blue']);
    await kubectlOk(['annotate', 'pod', name, '-n', namespace, 'note=hello']);
  });

  it('lets an administrator relabel once the override annotation is on the pod', async () => {
    const name = (await sharedSandboxPod('override-relabel')).metadata?.name ?? '';
    await kubectlOk([
      'annotate',
      'pod',
      name,
      '-n',
      namespace,
      `${ANNOTATIONS.deletionOverride}=INC-7 node repair`,
    ]);
    await kubectlOk(['label', 'pod', name, '-n', namespace, `${LABELS.sandbox}-`]);
  });
});

describe('a deletion override', () => {
  it('cannot come from the Sandbox’s pod template', async () => {
    const manifest = sandboxManifest(namespace, 'template-override', { worktree: 'wt-1' });
    const body = {
      ...manifest,
      spec: {
        ...manifest.spec,
        podTemplate: {
          ...manifest.spec.podTemplate,
          metadata: { annotations: { [ANNOTATIONS.deletionOverride]: 'preset' } },
        },
      },
    };
    const created = await customObjects()
      .createNamespacedCustomObject({
        group: 'sandbox.agents.dev',
        version: 'v1alpha1',
        namespace,
        plural: 'sandboxes',
        body,
      })
      .then(
        () => 'created',
        (error: unknown) => String((error as { body?: unknown }).body),
      );
    expect(created).toContain(ANNOTATIONS.deletionOverride);
    expect(await getSandbox(namespace, 'template-override')).toBeUndefined();
  });
});

describe('label squatting', () => {
  const squatter = (name: string, extra: Partial<NonNullable<V1Pod['metadata']>> = {}): V1Pod => ({
    metadata: { name, namespace, labels: { [LABELS.sandbox]: 'relabel' }, ...extra },
    spec: { containers: [{ name: 'c', image: 'registry.example/squat:1' }] },
  });

  it('does not protect a pod that only claims the sandbox label', async () => {
    await core().createNamespacedPod({ namespace, body: squatter('squatter') });
    const result = await kubectl(['delete', 'pod', 'squatter', '-n', namespace, '--wait=false']);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it('refuses a pod that claims a Sandbox as its owner, unless the operator creates it', async () => {
    const sandbox = await getSandbox(namespace, 'relabel');
    const owner = {
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'Sandbox',
      name: 'relabel',
      uid: sandbox?.metadata.uid ?? '',
      controller: true,
    };
    const created = await core()
      .createNamespacedPod({ namespace, body: squatter('forged-owner', { ownerReferences: [owner] }) })
      .then(
        () => 'created',
        (error: unknown) => String((error as { body?: unknown }).body),
      );
    expect(created).toContain('owned by a Sandbox');
  });

  it('neither blocks nor is deleted with the sandbox whose label it claims', async () => {
    await createSandbox(namespace, 'squatted', { worktree: 'wt-1' });
    await untilSandbox(
      namespace,
      'squatted',
      'squatted running',
      (sandbox) => sandbox.status?.phase === 'Running',
    );
    await core().createNamespacedPod({
      namespace,
      body: {
        ...squatter('squatted-9'),
        metadata: { ...squatter('squatted-9').metadata, labels: { [LABELS.sandbox]: 'squatted' } },
      },
    });
    await deleteSandbox(namespace, 'squatted');
    await sandboxGone(namespace, 'squatted', 60_000);
    expect(await podExists('squatted-9')).toBe(true);
  });
});
