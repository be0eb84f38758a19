/**
 * The administrator annotations of a Sandbox (issue 26 #7): `erase-references` deletes every reference of the
 * sandbox, other worktrees' attached ones included, and `adopted-from` sends it through the legacy walk. A
 * tenant with the built-in `edit` role may set neither; an administrator group (the admission parameter
 * `administratorGroups`, `system:masters` by default) may, and each use is audited.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_PARAMS } from '../../../operator/api/admission.ts';
import { GUARD_PROTECTION_POLICY } from '../../../operator/api/guard-protection.ts';
import { ANNOTATIONS } from '../../../operator/api/names.ts';
import { DEFAULT_NAMESPACE } from '../../../operator/api/render-crds.ts';
import { kubeConfig, testNamespace } from '../../harness/kube.ts';
import { asTenant, auditAnnotations, grantTenantEdit } from '../../harness/tenant.ts';
import { createSandbox, getSandbox, sandboxManifest } from '../controller/fixtures.ts';
import { eventually, grantOperatorRbac, pending } from '../controller/operator.ts';

const namespace = testNamespace('admin-annotations');
const params = () => kubeConfig().makeApiClient(CoreV1Api);
const REFUSED = 'may be set or changed only by an administrator';

// No operator runs here: the Sandboxes get no finalizer, and go with the namespace.
beforeAll(async () => {
  await grantOperatorRbac();
  await grantTenantEdit(namespace);
});

const annotate = (name: string, annotation: string, groups: readonly string[] = []) =>
  asTenant(['annotate', 'sandbox', name, '-n', namespace, '--overwrite', annotation], { groups });

describe('a tenant with edit', () => {
  it('may not ask for an erase of a sandbox’s references', async () => {
    await createSandbox(namespace, 'erase-me', { worktree: 'wt-1' });
    const result = await annotate('erase-me', `${ANNOTATIONS.eraseReferences}=mine now`);
    expect(result.exitCode, result.stdout).not.toBe(0);
    expect(result.stderr).toContain(ANNOTATIONS.eraseReferences);
    expect(result.stderr).toContain(REFUSED);
    const sandbox = await getSandbox(namespace, 'erase-me');
    expect(sandbox?.metadata.annotations?.[ANNOTATIONS.eraseReferences]).toBeUndefined();
  });

  it('may not mark a sandbox adopted, on an existing Sandbox or a new one', async () => {
    await createSandbox(namespace, 'adopt-me', { worktree: 'wt-1' });
    const result = await annotate('adopt-me', `${ANNOTATIONS.adoptedFrom}=legacy-pool`);
    expect(result.exitCode, result.stdout).not.toBe(0);
    expect(result.stderr).toContain(REFUSED);
    const created = await asTenant(['create', '-f', '-'], {
      input: JSON.stringify(
        sandboxManifest(namespace, 'born-adopted', {
          worktree: 'wt-1',
          annotations: { [ANNOTATIONS.adoptedFrom]: 'legacy-pool' },
        }),
      ),
    });
    expect(created.exitCode, created.stdout).not.toBe(0);
    expect(created.stderr).toContain(ANNOTATIONS.adoptedFrom);
    expect(created.stderr).toContain(REFUSED);
  });

  it('may neither raise nor lift the operator’s cleanup fence (it would refuse attaches, or open their window)', async () => {
    const fenced = { [ANNOTATIONS.cleanupFence]: '2026-12-02T07:00:00Z' };
    await createSandbox(namespace, 'fenced', { worktree: 'wt-1', annotations: fenced });
    await createSandbox(namespace, 'unfenced', { worktree: 'wt-1' });
    const lift = await asTenant([
      'annotate',
      'sandbox',
      'fenced',
      '-n',
      namespace,
      `${ANNOTATIONS.cleanupFence}-`,
    ]);
    const raise = await annotate('unfenced', `${ANNOTATIONS.cleanupFence}=2026-12-02T08:00:00Z`);
    for (const result of [lift, raise]) {
      expect(result.exitCode, result.stdout).not.toBe(0);
      expect(result.stderr).toContain(`${ANNOTATIONS.cleanupFence} is the operator’s fence`);
    }
    expect((await getSandbox(namespace, 'fenced'))?.metadata.annotations).toMatchObject(fenced);
  });

  it('may create a Sandbox that carries an erase value (inherited, it erases nothing: issue 25 #10)', async () => {
    const created = await asTenant(['create', '-f', '-'], {
      input: JSON.stringify(
        sandboxManifest(namespace, 'gitops-copy', {
          worktree: 'wt-1',
          annotations: { [ANNOTATIONS.eraseReferences]: 'kept by the repository' },
        }),
      ),
    });
    expect(created.exitCode, created.stderr).toBe(0);
  });
});

describe('an administrator', () => {
  it('in system:masters may set both, and each use is audited with who and why', async () => {
    await createSandbox(namespace, 'admin-erase', { worktree: 'wt-1' });
    const result = await annotate('admin-erase', `${ANNOTATIONS.eraseReferences}=INC-9 overflow`, [
      'system:masters',
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    const recorded = await eventually('the audit event of the erase request', async () => {
      const value = (await auditAnnotations('admin-erase'))
        .map((a) => a[`${GUARD_PROTECTION_POLICY}/administrator-annotation`])
        .find((v) => v !== undefined && v !== '');
      return value ?? pending(await auditAnnotations('admin-erase'));
    });
    expect(recorded).toContain('tenant-alice');
    expect(recorded).toContain(`${ANNOTATIONS.eraseReferences}=INC-9 overflow`);
  });

  it('is whoever is in a group the admission parameters name (administratorGroups)', async () => {
    await createSandbox(namespace, 'platform-erase', { worktree: 'wt-1' });
    const configMap = await params().readNamespacedConfigMap({
      name: ADMISSION_PARAMS,
      namespace: DEFAULT_NAMESPACE,
    });
    const before = configMap.data?.['administratorGroups'];
    const setGroups = (value: string | undefined) =>
      params().patchNamespacedConfigMap({
        name: ADMISSION_PARAMS,
        namespace: DEFAULT_NAMESPACE,
        body: [{ op: value === undefined ? 'remove' : 'add', path: '/data/administratorGroups', value }],
      });
    await setGroups('system:masters,platform-admins');
    try {
      await eventually('platform-admins may erase', async () => {
        const result = await annotate('platform-erase', `${ANNOTATIONS.eraseReferences}=INC-10`, [
          'platform-admins',
        ]);
        return result.exitCode === 0 ? true : pending(result.stderr);
      });
    } finally {
      await setGroups(before);
    }
  });
});
