/**
 * Who the pod-protection policy lets delete sandbox pods, for tests and benchmarks that run the operator under
 * another identity than the chart's ServiceAccount (the restricted test user, or admin).
 */
import {
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
  type CoreV1Api,
} from '@kubernetes/client-node';
import { ADMISSION_PARAMS } from '../../operator/api/admission.ts';
import { DEFAULT_NAMESPACE } from '../../operator/api/render-crds.ts';

export async function setOperatorUsers(core: CoreV1Api, users: readonly string[]): Promise<void> {
  await core.patchNamespacedConfigMap({
    name: ADMISSION_PARAMS,
    namespace: DEFAULT_NAMESPACE,
    body: [{ op: 'replace', path: '/data/operatorUsers', value: users.join(',') }],
  });
}

/** The user the tests and benches that run the operator as admin delete Sandboxes as (admin impersonates it). */
export const SANDBOX_DELETER = 'sandbox-deleter';

/**
 * Custom objects as SANDBOX_DELETER, bound to cluster-admin: where the operator runs as admin, admin is an
 * operator user, and the operator bounds let an operator user delete only a Sandbox its automatic cleanup
 * fenced (issue 26) — so a test's own deletes must come from someone else, as a user's do.
 */
export async function sandboxDeleter(admin: KubeConfig): Promise<CustomObjectsApi> {
  try {
    await admin.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
      body: {
        metadata: { name: SANDBOX_DELETER },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: SANDBOX_DELETER }],
      },
    });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
  const as = new KubeConfig();
  as.loadFromString(admin.exportConfig());
  as.users = as.users.map((user) => ({ ...user, impersonateUser: SANDBOX_DELETER }));
  return as.makeApiClient(CustomObjectsApi);
}
