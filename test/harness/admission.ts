/**
 * Who the pod-protection policy lets delete sandbox pods, for tests and benchmarks that run the operator under
 * another identity than the chart's ServiceAccount (the restricted test user, or admin).
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import { ADMISSION_PARAMS } from '../../operator/api/admission.ts';
import { DEFAULT_NAMESPACE } from '../../operator/api/render-crds.ts';

export async function setOperatorUsers(core: CoreV1Api, users: readonly string[]): Promise<void> {
  await core.patchNamespacedConfigMap({
    name: ADMISSION_PARAMS,
    namespace: DEFAULT_NAMESPACE,
    body: [{ op: 'replace', path: '/data/operatorUsers', value: users.join(',') }],
  });
}
