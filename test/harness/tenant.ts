/**
 * The adversary of the admission tests (docs/security.md, threat model): a tenant holding the built-in `edit`
 * role in one namespace, and nothing else. Played by impersonation from the admin kubeconfig, so no token
 * is minted; the API server judges the request as that user (RBAC, admission, audit).
 */
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import { eventually, pending } from './eventually.ts';
import { kubectl, kubectlOk, type KubectlCall, type KubectlResult } from './kube.ts';

export const TENANT = 'tenant-alice';

/**
 * Binds `edit` in `namespace` to the tenant, and waits until the role's aggregated rules apply: the built-in
 * ones, and our kinds', which the chart's RBAC aggregates into `edit` as an install does (apply it first:
 * grantOperatorRbac).
 */
export async function grantTenantEdit(namespace: string): Promise<void> {
  await kubectlOk([
    'create',
    'rolebinding',
    'tenant-edit',
    '-n',
    namespace,
    '--clusterrole=edit',
    `--user=${TENANT}`,
  ]);
  await eventually('the tenant’s edit role aggregated', async () => {
    const answers = await Promise.all(
      ['pods', 'sandboxes.sandbox.agents.dev'].map((resource) =>
        asTenant(['auth', 'can-i', 'patch', resource, '-n', namespace]),
      ),
    );
    return answers.every((a) => a.stdout.trim() === 'yes') ? true : pending(answers);
  });
}

/** kubectl as the tenant; `groups` adds groups to the impersonated user (an administrator's, say). */
export function asTenant(
  args: readonly string[],
  options: KubectlCall & { groups?: readonly string[] } = {},
): Promise<KubectlResult> {
  const groups = (options.groups ?? []).map((group) => `--as-group=${group}`);
  return kubectl([...args, `--as=${TENANT}`, ...groups], options);
}

/** The audit annotations the API server recorded for requests on `name` (JSON lines, Metadata level). */
export async function auditAnnotations(name: string): Promise<Record<string, string>[]> {
  const path = inject('admissionAuditLog');
  if (path === null) throw new Error('this cluster keeps no audit log (external cluster)');
  return (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line.includes(name))
    .map(
      (line) => JSON.parse(line) as { objectRef?: { name?: string }; annotations?: Record<string, string> },
    )
    .filter((event) => event.objectRef?.name === name && event.annotations !== undefined)
    .map((event) => event.annotations ?? {});
}
