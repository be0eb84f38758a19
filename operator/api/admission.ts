/**
 * The admission policy that keeps sandbox pods out of everyone's hands but the operator's. A sandbox pod is
 * a pod owned by a Sandbox (an owner reference, which only the operator may set: see below) — not any pod
 * that claims the sandbox label, so a squatting label protects nothing (issue 15). For anyone but the
 * operator users (the `sandbox-operator-admission` ConfigMap, `data.operatorUsers`):
 *
 * - DELETE of a sandbox pod is refused unless the pod is already terminating (the kubelet's final delete
 *   must pass) or carries the deletion-override annotation;
 * - UPDATE/PATCH may not change its sandbox label, the exclusivity finalizer, its owner references (a
 *   relabel-then-delete, issue 9 #5) or its spec (an image swap, an ephemeral container, a resize: issue 26
 *   #6) unless the override is on the pod, nor add a Sandbox owner to a pod;
 * - CREATE of a pod owned by a Sandbox is refused, and nobody (the operator included) creates a sandbox pod
 *   that already carries the override: an override present at creation came from a template.
 *
 * The override is set or changed only by an administrator (the parameter `administratorGroups`, issue 26), and
 * every use of it is written to the audit log (auditAnnotations). Evictions are refused by the
 * PodDisruptionBudget the controller creates (the eviction request does not show the pod). What the
 * operator's own identity may do is bounded in operator-bounds.ts.
 */
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER, GROUP, LABELS } from './names.ts';

export const ADMISSION_PARAMS = 'sandbox-operator-admission';
export const POLICY_NAME = `sandbox-pod-protection.${GROUP}`;

export type Variable = { readonly name: string; readonly expression: string };
export type Validation = { expression: string; messageExpression: string; reason: 'Forbidden' | 'Invalid' };

const label = `'${LABELS.sandbox}'`;
const override = `'${ANNOTATIONS.deletionOverride}'`;
const finalizer = `'${EXCLUSIVITY_FINALIZER}'`;
const sandboxOwner = `r.kind == 'Sandbox' && r.apiVersion.startsWith('${GROUP}/')`;
const owners = (o: string) => `${o}.metadata.?ownerReferences.orValue([])`;

/** What both pod policies know about a request, as CEL variables (lazily evaluated by the API server). */
export const POD_VARIABLES: readonly Variable[] = [
  {
    name: 'operatorUsers',
    expression: "params.?data.?operatorUsers.orValue('').split(',')",
  },
  { name: 'isOperator', expression: 'request.userInfo.username in variables.operatorUsers' },
  { name: 'oldOwned', expression: `oldObject != null && ${owners('oldObject')}.exists(r, ${sandboxOwner})` },
  { name: 'newOwned', expression: `object != null && ${owners('object')}.exists(r, ${sandboxOwner})` },
  {
    name: 'owner',
    expression:
      `variables.oldOwned ? ${owners('oldObject')}.filter(r, ${sandboxOwner})[0].name : ` +
      `variables.newOwned ? ${owners('object')}.filter(r, ${sandboxOwner})[0].name : ''`,
  },
  {
    name: 'oldLabel',
    expression: `oldObject != null ? oldObject.metadata.?labels[?${label}].orValue('') : ''`,
  },
  { name: 'newLabel', expression: `object != null ? object.metadata.?labels[?${label}].orValue('') : ''` },
  {
    name: 'oldFinalized',
    expression: `oldObject != null && ${finalizer} in oldObject.metadata.?finalizers.orValue([])`,
  },
  {
    name: 'newFinalized',
    expression: `object != null && ${finalizer} in object.metadata.?finalizers.orValue([])`,
  },
  {
    name: 'oldOverride',
    expression: `oldObject != null ? oldObject.metadata.?annotations[?${override}].orValue('') : ''`,
  },
  {
    name: 'newOverride',
    expression: `object != null ? object.metadata.?annotations[?${override}].orValue('') : ''`,
  },
  {
    name: 'sameOwners',
    expression:
      `request.operation == 'UPDATE' && ` +
      `${owners('object')}.filter(r, ${sandboxOwner}) == ${owners('oldObject')}.filter(r, ${sandboxOwner})`,
  },
  {
    name: 'pod',
    expression:
      "request.namespace + '/' + (object != null ? object.metadata.?name.orValue('') : oldObject.metadata.name)",
  },
];

/** Who administers: members of a group in the parameter `administratorGroups` (`system:masters` when absent). */
export const ADMINISTRATOR_VARIABLES: readonly Variable[] = [
  {
    name: 'administratorGroups',
    expression: "params.?data.?administratorGroups.orValue('system:masters').split(',')",
  },
  {
    name: 'isAdministrator',
    expression: 'request.userInfo.?groups.orValue([]).exists(g, g in variables.administratorGroups)',
  },
];

/**
 * What a non-operator UPDATE changed that only the operator (or the override) may change, as field paths
 * (empty: none): the protection metadata, and the spec — an image swapped into a shared sandbox runs in
 * every other session's sandbox (issue 26 #6), and an ephemeral container joins its process namespace.
 */
const changedProtection =
  `['metadata.labels[${LABELS.sandbox}]'].filter(f, variables.oldLabel != variables.newLabel) + ` +
  `['metadata.finalizers[${EXCLUSIVITY_FINALIZER}]'].filter(f, variables.oldFinalized != variables.newFinalized) + ` +
  `['metadata.ownerReferences'].filter(f, !variables.sameOwners) + ` +
  `['spec'].filter(f, object.spec != oldObject.spec)`;

const toOverride = `an administrator annotates the pod with ${ANNOTATIONS.deletionOverride}=<reason> to override`;

/** A ValidatingAdmissionPolicy that fails closed and reads the one parameters ConfigMap. */
export function validatingPolicy<Spec extends object>(name: string, spec: Spec) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { failurePolicy: 'Fail', paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, ...spec },
  };
}

/**
 * Only pods that carry the sandbox label, before or after the request: every sandbox pod does (the operator
 * creates it so, and its label may not change), and no other pod's write ever waits on this policy or its
 * parameters. A missing parameters ConfigMap then refuses what touches sandbox pods (nobody is known to be
 * the operator: fail closed) and nothing else (issue 25, #9). A pod owned by a Sandbox without the label is
 * not a sandbox pod: the operator neither counts nor releases it (cache/pod-summary.ts).
 */
export const SANDBOX_POD_SELECTOR = {
  matchExpressions: [{ key: LABELS.sandbox, operator: 'Exists' }],
} as const;

export function podProtectionPolicy(name: string = POLICY_NAME) {
  return validatingPolicy(name, {
    matchConstraints: {
      objectSelector: SANDBOX_POD_SELECTOR,
      resourceRules: [
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          resources: ['pods'],
        },
        // The status subresource stores label, annotation and finalizer changes too (issue 25, #1); ephemeral
        // containers and in-place resize change the spec through their own subresources (issue 26 #6).
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          operations: ['UPDATE'],
          resources: ['pods/status', 'pods/ephemeralcontainers', 'pods/resize'],
        },
      ],
    },
    variables: [
      ...POD_VARIABLES,
      ...ADMINISTRATOR_VARIABLES,
      {
        name: 'changed',
        expression: `request.operation == 'UPDATE' ? ${changedProtection} : [''].filter(f, false)`,
      },
    ],
    validations: [
      {
        expression:
          "request.operation != 'DELETE' || !variables.oldOwned || has(oldObject.metadata.deletionTimestamp) || " +
          "variables.isOperator || variables.oldOverride != ''",
        messageExpression:
          "'sandbox pod ' + oldObject.metadata.name + ' belongs to Sandbox ' + variables.owner + " +
          `' and is kept until its exclusivity decision releases it: delete the Sandbox instead, or ${toOverride}'`,
        reason: 'Forbidden',
      },
      {
        expression:
          "request.operation != 'UPDATE' || variables.isOperator || !(variables.oldOwned || variables.newOwned) || " +
          "(variables.oldOwned && variables.newOverride != '') || size(variables.changed) == 0",
        messageExpression:
          "(variables.oldOwned ? 'sandbox pod ' + variables.pod + ' of Sandbox ' + variables.owner : 'pod ' + variables.pod) + " +
          "': ' + variables.changed.join(', ') + ' may be changed only by the sandbox operator (on a sandbox pod, " +
          `${toOverride} first)'`,
        reason: 'Forbidden',
      },
      // The override lifts every guard of the pod (its deletion, its spec), so setting it is the administrator's,
      // as the Sandbox's administrator annotations are (guard-protection.ts): a tenant with pod `patch` would
      // otherwise swap an image into a shared sandbox by annotating first. Removing it restores the guards.
      {
        expression:
          "request.operation != 'UPDATE' || !variables.oldOwned || variables.newOverride == '' || " +
          'variables.newOverride == variables.oldOverride || variables.isAdministrator',
        messageExpression:
          `'sandbox pod ' + variables.pod + ' of Sandbox ' + variables.owner + ': ${ANNOTATIONS.deletionOverride} ` +
          'may be set or changed only by an administrator (a member of a group in the admission parameter ' +
          "administratorGroups: ' + variables.administratorGroups.join(', ') + ')'",
        reason: 'Forbidden',
      },
      {
        expression: "request.operation != 'CREATE' || variables.isOperator || !variables.newOwned",
        messageExpression:
          "'pod ' + variables.pod + ': only the sandbox operator creates pods owned by a Sandbox (metadata.ownerReferences)'",
        reason: 'Forbidden',
      },
      {
        expression:
          "request.operation != 'CREATE' || variables.newOverride == '' || !(variables.newOwned || variables.newLabel != '')",
        messageExpression:
          `'pod ' + variables.pod + ': ${ANNOTATIONS.deletionOverride} cannot be set when a pod is created ` +
          "(a Sandbox template must not pre-set it); an administrator sets it on the running pod'",
        reason: 'Forbidden',
      },
    ],
    auditAnnotations: [
      {
        key: 'override-delete',
        valueExpression:
          "request.operation == 'DELETE' && variables.oldOwned && !variables.isOperator && variables.oldOverride != '' && " +
          "!has(oldObject.metadata.deletionTimestamp) ? request.userInfo.username + ' deleted sandbox pod ' + " +
          "variables.pod + ' of Sandbox ' + variables.owner + ' under the deletion override: ' + variables.oldOverride : ''",
      },
      {
        key: 'override-update',
        valueExpression:
          "request.operation == 'UPDATE' && variables.oldOwned && !variables.isOperator && variables.newOverride != '' && " +
          "(variables.oldOverride == '' || size(variables.changed) > 0) ? request.userInfo.username + ' set or used the " +
          "deletion override on sandbox pod ' + variables.pod + ' of Sandbox ' + variables.owner + ' (' + " +
          "(size(variables.changed) > 0 ? 'changed ' + variables.changed.join(', ') : 'no protection change') + '): ' + variables.newOverride : ''",
      },
    ],
  });
}

/**
 * Binds a policy to its parameters; names default to the kubectl-only install's, the chart's carry the release.
 * Parameters that cannot be found deny (fail closed), unless `whenParamsMissing` says the policy may be skipped.
 */
export function policyBinding(
  policyName: string,
  paramNamespace: string,
  paramsName: string = ADMISSION_PARAMS,
  whenParamsMissing: 'Deny' | 'Allow' = 'Deny',
) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policyName },
    spec: {
      policyName,
      validationActions: ['Deny'],
      paramRef: { name: paramsName, namespace: paramNamespace, parameterNotFoundAction: whenParamsMissing },
    },
  };
}

export const podProtectionBinding = (
  paramNamespace: string,
  policyName: string = POLICY_NAME,
  paramsName: string = ADMISSION_PARAMS,
) => policyBinding(policyName, paramNamespace, paramsName);

/** The admission parameters every policy reads. Keys other than operatorUsers are optional. */
export type AdmissionSettings = {
  /** Who may release sandbox pods: the operator's ServiceAccount user(s). */
  readonly operatorUsers: readonly string[];
  /** Namespaces the operator acts in; empty: all (operator-bounds.ts). */
  readonly watchNamespaces?: readonly string[];
  /** The pod-template level (template-policy.ts). */
  readonly podTemplateLevel?: string;
  /** Namespaces whose Sandboxes the pod-template policy does not check. */
  readonly podTemplateExemptNamespaces?: readonly string[];
  /** Nodes a template may name in `nodeName` (template-placement.ts); empty: none. */
  readonly podTemplateNodeNames?: readonly string[];
  /** Groups whose members may set a Sandbox's administrator annotations (guard-protection.ts). */
  readonly administratorGroups?: readonly string[];
  /**
   * `key=value`: the operator's identity writes only in namespaces carrying that label (operator-bounds.ts);
   * empty: every namespace it watches.
   */
  readonly managedNamespaceLabel?: string;
  /** The images the operator may run as the shell reaper (reaper-bounds.ts); empty: any. */
  readonly reaperImages?: readonly string[];
  /** Variables a mutating webhook of the cluster adds to every container, the reaper's too (reaper-bounds.ts). */
  readonly reaperExtraEnv?: readonly string[];
  /** Mount paths a mutating webhook of the cluster adds to every container, the reaper's too. */
  readonly reaperExtraMountPaths?: readonly string[];
  /**
   * `allowed`: the cluster's mutating admission puts sandbox pods on the host network (pods that reach the API
   * server over the node's loopback), so the operator bounds do not refuse it (operator-reach.ts).
   */
  readonly sandboxPodsOnHostNetwork?: string;
};

export function admissionParams(
  namespace: string,
  settings: AdmissionSettings | readonly string[],
  name: string = ADMISSION_PARAMS,
) {
  const s: AdmissionSettings = Array.isArray(settings)
    ? { operatorUsers: settings as readonly string[] }
    : (settings as AdmissionSettings);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
    data: {
      operatorUsers: s.operatorUsers.join(','),
      ...(s.watchNamespaces ? { watchNamespaces: s.watchNamespaces.join(',') } : {}),
      ...(s.podTemplateLevel ? { podTemplateLevel: s.podTemplateLevel } : {}),
      ...(s.podTemplateExemptNamespaces
        ? { podTemplateExemptNamespaces: s.podTemplateExemptNamespaces.join(',') }
        : {}),
      ...(s.podTemplateNodeNames ? { podTemplateNodeNames: s.podTemplateNodeNames.join(',') } : {}),
      ...(s.administratorGroups ? { administratorGroups: s.administratorGroups.join(',') } : {}),
      ...(s.managedNamespaceLabel !== undefined ? { managedNamespaceLabel: s.managedNamespaceLabel } : {}),
      ...(s.reaperImages ? { reaperImages: s.reaperImages.join(',') } : {}),
      ...(s.reaperExtraEnv ? { reaperExtraEnv: s.reaperExtraEnv.join(',') } : {}),
      ...(s.reaperExtraMountPaths ? { reaperExtraMountPaths: s.reaperExtraMountPaths.join(',') } : {}),
      ...(s.sandboxPodsOnHostNetwork !== undefined
        ? { sandboxPodsOnHostNetwork: s.sandboxPodsOnHostNetwork }
        : {}),
    },
  };
}
