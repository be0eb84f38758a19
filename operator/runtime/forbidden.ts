/**
 * What a 403 from the API server means, and what a person does about it. Pure: it reads the refusal's
 * message, in the words the API server uses for RBAC, admission policies and Pod Security.
 *
 * A 403 is a misconfiguration, not a race: the same request with the same identity is refused again until
 * someone grants the permission, changes the identity, or changes what admission checks. So it is said once
 * with its fix (docs/deletion.md "When a step fails"), not retried with backoff for ever.
 */
import type { KubeRequestError } from '../kube/errors.ts';

/** What a person must change before a retry can succeed; retrying alone never will. */
export type Misconfiguration = {
  /** CamelCase, for a condition's or an Event's reason. */
  readonly reason: string;
  /** What was refused, in the API server's (or the check's) own words. */
  readonly refused: string;
  /** What to do about it: which identity, which permission, the setting or the command. */
  readonly fix: string;
};

// `User "u" cannot delete resource "pods" in API group "" in the namespace "ns"` (or `at the cluster scope`).
const RBAC =
  /User "(?<user>[^"]+)" cannot (?<verb>\S+) resource "(?<resource>[^"]+)"(?: in API group "(?<group>[^"]*)")?(?: in the namespace "(?<namespace>[^"]+)")?/;
// `ValidatingAdmissionPolicy 'name' with binding 'binding' denied request: message`
// or `admission webhook "name" denied the request: message` (a webhook: Gatekeeper, Kyverno).
const ADMISSION =
  /(?:ValidatingAdmissionPolicy '(?<policy>[^']+)'.*? denied request|admission webhook "(?<webhook>[^"]+)" denied the request):? (?<denial>.*)$/s;
const POD_SECURITY = /violates PodSecurity "(?<level>[^"]+)"/;

export function forbiddenMisconfiguration(error: KubeRequestError): Misconfiguration {
  const refused = error.message;
  const rbac = RBAC.exec(refused)?.groups;
  if (rbac?.['user'] && rbac['verb'] && rbac['resource']) {
    const { user, verb } = rbac;
    const group = rbac['group'] ?? '';
    const resource = group === '' ? rbac['resource'] : `${rbac['resource']}.${group}`;
    const where = rbac['namespace'] ? ` -n ${rbac['namespace']}` : '';
    return {
      reason: 'RBACForbidden',
      refused,
      fix:
        `grant ${user} "${verb}" on ${resource}${rbac['namespace'] ? ` in namespace ${rbac['namespace']}` : ' cluster-wide'}: ` +
        `the chart's ClusterRole grants every permission the operator needs (helm upgrade restores an edited one; ` +
        `rbac.extraSubjects binds it to another identity). Check: kubectl auth can-i ${verb} ${resource}${where} --as ${user}`,
    };
  }
  const admission = ADMISSION.exec(refused)?.groups;
  const policy = admission?.['policy'] ?? admission?.['webhook'];
  if (admission && policy) {
    return {
      reason: 'AdmissionRefused',
      refused,
      fix:
        `the admission policy ${policy} refused it (${admission['denial'] ?? ''}). If the operator's ` +
        `identity is the cause, run it as an identity the policy trusts (the chart's ServiceAccount) or add this ` +
        `one to the policy's parameters (data.operatorUsers); the operator logs its identity at start`,
    };
  }
  const podSecurity = POD_SECURITY.exec(refused)?.groups;
  if (podSecurity?.['level']) {
    return {
      reason: 'PodSecurityRefused',
      refused,
      fix:
        `the namespace enforces Pod Security ${podSecurity['level']}: change spec.podTemplate to meet it, or ` +
        `the namespace's pod-security.kubernetes.io/enforce label`,
    };
  }
  return {
    reason: 'Forbidden',
    refused,
    fix: "the API server refused the request (HTTP 403): grant the operator's identity what the request needs",
  };
}
