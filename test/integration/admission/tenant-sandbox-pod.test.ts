/**
 * A tenant holding the built-in `edit` role against a shared sandbox pod (issue 26 #2, #6): it may not swap
 * the pod's spec (an image, an ephemeral container) without the deletion override, and a change under the
 * override is audited; nobody reaches into the shell reaper sidecar with exec or attach.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICY_NAME } from '../../../operator/api/admission.ts';
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER, LABELS } from '../../../operator/api/names.ts';
import { kubectl, testNamespace } from '../../harness/kube.ts';
import { asTenant, auditAnnotations, grantTenantEdit } from '../../harness/tenant.ts';
import { createReference, createSandbox } from '../controller/fixtures.ts';
import {
  core,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from '../controller/operator.ts';

const namespace = testNamespace('tenant-pod');
let operator: RunningOperator;

beforeAll(async () => {
  await grantOperatorRbac();
  await grantTenantEdit(namespace);
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator.stop();
});

/** A running sandbox with the shell reaper, whose pod a foreign session keeps. */
async function sharedSandboxPod(name: string): Promise<string> {
  await createSandbox(namespace, name, { worktree: 'wt-1', shellReaper: true });
  await createReference(namespace, `${name}-foreign`, {
    sandbox: name,
    session: 'workspace_9',
    worktree: 'wt-2',
  });
  const pod = await eventually(`pod of ${name}`, async () => {
    const pods = await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${name}` });
    const found: V1Pod | undefined = pods.items[0];
    return found?.metadata?.finalizers?.includes(EXCLUSIVITY_FINALIZER) === true &&
      found.status?.phase === 'Running'
      ? found
      : pending({ pod: found?.metadata?.name, phase: found?.status?.phase });
  });
  return pod.metadata?.name ?? '';
}

const imageOf = async (name: string) =>
  (await core().readNamespacedPod({ namespace, name })).spec?.containers.find((c) => c.name === 'agent')
    ?.image;

describe('a tenant with edit and a shared sandbox pod’s spec', () => {
  it('may not swap an image into it without the override', async () => {
    const name = await sharedSandboxPod('image-swap');
    const before = await imageOf(name);
    const swap = await asTenant([
      'set',
      'image',
      `pod/${name}`,
      '-n',
      namespace,
      'agent=registry.example/attacker:1',
    ]);
    expect(swap.exitCode, swap.stdout).not.toBe(0);
    expect(swap.stderr).toContain('spec may be changed only by the sandbox operator');
    expect(swap.stderr).toContain(ANNOTATIONS.deletionOverride);
    expect(await imageOf(name)).toBe(before);
  });

  it('may not add an ephemeral container into its process namespace without the override', async () => {
    const name = await sharedSandboxPod('debug');
    const debug = await asTenant([
      'debug',
      name,
      '-n',
      namespace,
      '--image=registry.example/attacker:1',
      '--target=shell-reaper',
      '--',
      'true',
    ]);
    expect(debug.exitCode, debug.stdout).not.toBe(0);
    expect(debug.stderr).toContain('spec may be changed only by the sandbox operator');
    const pod = await core().readNamespacedPod({ namespace, name });
    expect(pod.spec?.ephemeralContainers).toBeUndefined();
  });

  it('may not set the override itself, so neither swap an image nor delete the pod under it', async () => {
    const name = await sharedSandboxPod('override-self');
    const annotate = await asTenant([
      'annotate',
      'pod',
      name,
      '-n',
      namespace,
      `${ANNOTATIONS.deletionOverride}=mine now`,
    ]);
    expect(annotate.exitCode, annotate.stdout).not.toBe(0);
    expect(annotate.stderr).toContain(
      `${ANNOTATIONS.deletionOverride} may be set or changed only by an administrator`,
    );
    const pod = await core().readNamespacedPod({ namespace, name });
    expect(pod.metadata?.annotations?.[ANNOTATIONS.deletionOverride]).toBeUndefined();
    const deleted = await asTenant(['delete', 'pod', name, '-n', namespace, '--wait=false']);
    expect(deleted.exitCode, deleted.stdout).not.toBe(0);
  });

  it('may change it under the override an administrator set, and the change is audited with who, what and why', async () => {
    const name = await sharedSandboxPod('override-swap');
    const annotate = await asTenant(
      ['annotate', 'pod', name, '-n', namespace, `${ANNOTATIONS.deletionOverride}=INC-7 image hotfix`],
      { groups: ['system:masters'] },
    );
    expect(annotate.exitCode, annotate.stderr).toBe(0);
    const swap = await asTenant([
      'set',
      'image',
      `pod/${name}`,
      '-n',
      namespace,
      'agent=registry.example/fix:2',
    ]);
    expect(swap.exitCode, swap.stderr).toBe(0);
    expect(await imageOf(name)).toBe('registry.example/fix:2');
    const recorded = await eventually('the audit event of the swap', async () => {
      const values = (await auditAnnotations(name)).flatMap((a) =>
        Object.entries(a).filter(
          ([key, value]) => key === `${POLICY_NAME}/override-update` && value.includes('spec'),
        ),
      );
      return values[0]?.[1] ?? pending(await auditAnnotations(name));
    });
    expect(recorded).toContain('tenant-alice');
    expect(recorded).toContain('changed spec');
    expect(recorded).toContain('INC-7 image hotfix');
  });
});

describe('the shell reaper sidecar', () => {
  const REFUSED = 'the shell reaper sidecar (container shell-reaper) is the operator’s';

  it('refuses exec and attach into it, to the tenant and to a cluster administrator alike', async () => {
    const name = await sharedSandboxPod('reaper-exec');
    const attempts = [
      ['exec', name, '-n', namespace, '-c', 'shell-reaper', '--', 'cat', '/proc/1/environ'],
      ['attach', name, '-n', namespace, '-c', 'shell-reaper'],
    ];
    for (const attempt of attempts) {
      for (const [who, result] of [
        ['tenant', await asTenant(attempt, { timeoutMs: 20_000 })],
        ['admin', await kubectl(attempt, { timeoutMs: 20_000 })],
      ] as const) {
        expect(result.exitCode, `${who}: ${attempt.join(' ')}`).not.toBe(0);
        expect(result.stderr, `${who}: ${attempt.join(' ')}`).toContain(REFUSED);
      }
    }
  });

  it('leaves exec into the agent’s own container to RBAC', async () => {
    const name = await sharedSandboxPod('agent-exec');
    const exec = await asTenant(['exec', name, '-n', namespace, '-c', 'agent', '--', 'true'], {
      timeoutMs: 20_000,
    });
    expect(exec.stderr).not.toContain(REFUSED);
  });
});
