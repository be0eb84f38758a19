/**
 * Nobody reaches into the shell reaper sidecar (issue 26 #2): exec and attach into the container
 * `shell-reaper` are refused, whoever asks. The sidecar holds the reaper's token and, in the Privileged mode,
 * root with SYS_PTRACE and DAC_OVERRIDE: an exec there (the built-in `edit` role grants `pods/exec`) would
 * be the tenant's root in the pod. The operator never execs (it has no `pods/exec` right); an administrator
 * who must look inside removes this policy's binding, which is itself an audited, cluster-scoped act.
 *
 * A ValidatingAdmissionPolicy sees CONNECT requests (Kubernetes >= 1.30): `object` is the PodExecOptions or
 * PodAttachOptions, whose `container` names the target. kubectl always sends it (defaulting client-side); the
 * API server itself defaults only to the pod's one regular container, never to an init container such as the
 * native sidecar. The options carry no labels, so the policy cannot select sandbox pods: the container name is
 * the operator's, reserved in every pod the binding covers (the watched namespace under the chart).
 *
 * Port-forward and the pod proxy name no container: they reach the pod's network namespace, where the sidecar
 * listens on nothing (its socket is a Unix socket on a volume), so they are left to RBAC. Ephemeral containers
 * (`kubectl debug --target=shell-reaper`) are a spec change, refused by pod protection (admission.ts).
 *
 * No parameters: nobody is excepted, so a missing parameters ConfigMap changes nothing here.
 */
import { GROUP, REAPER_CONTAINER } from './names.ts';

export const REAPER_ACCESS_POLICY = `sandbox-reaper-access.${GROUP}`;

export function reaperAccessPolicy(name: string = REAPER_ACCESS_POLICY) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CONNECT'],
            resources: ['pods/exec', 'pods/attach'],
          },
        ],
      },
      validations: [
        {
          expression: `object.?container.orValue('') != '${REAPER_CONTAINER}'`,
          messageExpression:
            `'pod ' + request.namespace + '/' + request.name + ': the shell reaper sidecar (container ` +
            `${REAPER_CONTAINER}) is the operator’s: ' + request.subResource + ' into it is refused to everyone'`,
          reason: 'Forbidden',
        },
      ],
    },
  };
}

/** Binds the policy with no parameters; names default to the kubectl-only install's. */
export function reaperAccessBinding(policyName: string = REAPER_ACCESS_POLICY) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policyName },
    spec: { policyName, validationActions: ['Deny'] },
  };
}
