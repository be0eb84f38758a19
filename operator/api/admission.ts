/**
 * The admission policy that keeps every other deletion path off sandbox pods: a DELETE of a pod labelled
 * with its sandbox is refused unless the pod is already terminating (the operator, or an override, started
 * it; the kubelet's final delete must pass), the request comes from the operator (users listed in the
 * `sandbox-operator-admission` ConfigMap), or the pod carries the deletion-override annotation. Evictions are
 * refused by the PodDisruptionBudget the controller creates (the eviction request does not show the pod).
 */
import { ANNOTATIONS, GROUP, LABELS } from './names.ts';

export const ADMISSION_PARAMS = 'sandbox-operator-admission';
export const POLICY_NAME = `sandbox-pod-protection.${GROUP}`;

export function podProtectionPolicy(name: string = POLICY_NAME) {
  const label = `'${LABELS.sandbox}'`;
  const override = `'${ANNOTATIONS.deletionOverride}'`;
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'] },
        ],
      },
      matchConditions: [
        {
          name: 'sandbox-pod',
          expression: `has(oldObject.metadata.labels) && ${label} in oldObject.metadata.labels`,
        },
      ],
      variables: [
        { name: 'sandbox', expression: `oldObject.metadata.labels[${label}]` },
        {
          name: 'operatorUsers',
          expression:
            "has(params.data) && has(params.data.operatorUsers) ? params.data.operatorUsers.split(',') : []",
        },
      ],
      validations: [
        {
          expression:
            'has(oldObject.metadata.deletionTimestamp) || request.userInfo.username in variables.operatorUsers || ' +
            `(has(oldObject.metadata.annotations) && ${override} in oldObject.metadata.annotations)`,
          messageExpression:
            "'sandbox pod ' + oldObject.metadata.name + ' belongs to Sandbox ' + variables.sandbox + " +
            "' and is kept until its exclusivity decision releases it: delete the Sandbox instead, or annotate the pod with " +
            `${ANNOTATIONS.deletionOverride}=<reason> to override'`,
          reason: 'Forbidden',
        },
      ],
    },
  };
}

/** Names default to the kubectl-only install's; the chart passes ones that carry the release. */
export function podProtectionBinding(
  paramNamespace: string,
  names: { readonly policy: string; readonly params: string } = {
    policy: POLICY_NAME,
    params: ADMISSION_PARAMS,
  },
) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: names.policy },
    spec: {
      policyName: names.policy,
      validationActions: ['Deny'],
      paramRef: { name: names.params, namespace: paramNamespace, parameterNotFoundAction: 'Deny' },
    },
  };
}

/** Who the policy lets delete sandbox pods: the operator's ServiceAccount user(s). */
export function admissionParams(
  namespace: string,
  operatorUsers: readonly string[],
  name: string = ADMISSION_PARAMS,
) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
    data: { operatorUsers: operatorUsers.join(',') },
  };
}
