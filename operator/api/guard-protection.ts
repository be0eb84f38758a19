/**
 * The guards around a sandbox's pods are themselves guarded. For anyone but the operator users:
 *
 * - the eviction guard (the sandbox's PodDisruptionBudget, labelled and managed by the operator) may not be
 *   deleted or changed: the eviction API skips DELETE admission, so between a deleted budget and the one the
 *   operator re-creates a drain could evict a shared sandbox's pods (found by the soak, docs/soak.md);
 * - a Sandbox may not lose the exclusivity finalizer, deleting or not: a `kubectl replace` (or a GitOps
 *   Replace) sends no finalizers. On a Sandbox being deleted it would vanish with no decision; on a live one
 *   a deletion before the operator puts the finalizer back (the soak's seed 20261218: a replace, then a
 *   foreground prune) would leave it with no decision either, its pods held forever. `kubectl apply` and
 *   server-side apply keep the finalizer, since they do not own it.
 *
 * - an adopted Sandbox may not lose or change its adopted-from annotation before the operator has recorded the
 *   adoption in its status (issue 25, #4): without it, its first status would carry the marker, and no legacy
 *   walk would run. Once recorded, the operator remembers it whatever the annotation says.
 *
 * A terminating namespace lifts the first two: its deletion is the administrator's, and it removes everything in it.
 * The budgets have their own policy, so it can select them by label (as pod protection selects pods): no other
 * budget in the cluster waits on the parameters.
 */
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER, GROUP, LABELS, MANAGED_BY } from './names.ts';
import { validatingPolicy } from './admission.ts';

export const GUARD_PROTECTION_POLICY = `sandbox-guard-protection.${GROUP}`;
export const BUDGET_PROTECTION_POLICY = `sandbox-budget-protection.${GROUP}`;

const label = `'${LABELS.sandbox}'`;
const finalizer = `'${EXCLUSIVITY_FINALIZER}'`;
const adoptedFrom = `'${ANNOTATIONS.adoptedFrom}'`;
const adoption = (o: string) => `${o}.metadata.?annotations[?${adoptedFrom}]`;
/** A Sandbox UPDATE that removes or changes adopted-from before the status records the adoption. */
const adoptionLost =
  `${adoption('oldObject')}.hasValue() && !oldObject.?status.?reconciliation.hasValue() && ` +
  `${adoption('object')}.orValue('') != ${adoption('oldObject')}.value()`;
const finalizerStripped =
  `${finalizer} in oldObject.metadata.?finalizers.orValue([]) && ` +
  `!(${finalizer} in object.metadata.?finalizers.orValue([]))`;

const GUARD_VARIABLES = [
  {
    name: 'isOperator',
    expression: "request.userInfo.username in params.?data.?operatorUsers.orValue('').split(',')",
  },
  {
    name: 'namespaceTerminating',
    expression: 'namespaceObject != null && has(namespaceObject.metadata.deletionTimestamp)',
  },
];

/**
 * Only budgets that carry the sandbox label and the operator's managed-by label, before or after the request:
 * every eviction guard does (the operator creates it so, and this policy keeps it so). No other budget's write
 * ever waits on this policy or its parameters, so a missing parameters ConfigMap refuses what touches the
 * guards (nobody is known to be the operator: fail closed) and nothing else (issue 25, #9).
 */
export const EVICTION_GUARD_SELECTOR = {
  matchExpressions: [
    { key: LABELS.sandbox, operator: 'Exists' },
    { key: LABELS.managedBy, operator: 'In', values: [MANAGED_BY] },
  ],
} as const;

/** The eviction guards: changed or deleted by the operator users only (or with their namespace). */
export function budgetProtectionPolicy(name: string = BUDGET_PROTECTION_POLICY) {
  return validatingPolicy(name, {
    matchConstraints: {
      objectSelector: EVICTION_GUARD_SELECTOR,
      resourceRules: [
        {
          apiGroups: ['policy'],
          apiVersions: ['v1'],
          operations: ['UPDATE', 'DELETE'],
          resources: ['poddisruptionbudgets'],
        },
        // Its status subresource stores label changes too: a relabelled guard would no longer be guarded.
        {
          apiGroups: ['policy'],
          apiVersions: ['v1'],
          operations: ['UPDATE'],
          resources: ['poddisruptionbudgets/status'],
        },
      ],
    },
    variables: GUARD_VARIABLES,
    validations: [
      {
        expression: 'variables.isOperator || variables.namespaceTerminating',
        messageExpression:
          "'poddisruptionbudget ' + oldObject.metadata.name + ' is the eviction guard of Sandbox ' + " +
          `oldObject.metadata.labels[${label}] + ' and is kept by the operator until the sandbox is released: delete the Sandbox instead'`,
        reason: 'Forbidden',
      },
    ],
  });
}

/** The Sandbox's exclusivity finalizer and its adoption annotation (every Sandbox is ours: no selector). */
export function guardProtectionPolicy(name: string = GUARD_PROTECTION_POLICY) {
  return validatingPolicy(name, {
    matchConstraints: {
      resourceRules: [
        { apiGroups: [GROUP], apiVersions: ['*'], operations: ['UPDATE'], resources: ['sandboxes'] },
      ],
    },
    matchConditions: [{ name: 'guard', expression: `(${finalizerStripped}) || (${adoptionLost})` }],
    variables: GUARD_VARIABLES,
    validations: [
      {
        expression: `!(${finalizerStripped}) || variables.isOperator || variables.namespaceTerminating`,
        messageExpression:
          "'sandbox ' + oldObject.metadata.name + (has(oldObject.metadata.deletionTimestamp) ? ' is being deleted' : '') + ': its finalizer " +
          `${EXCLUSIVITY_FINALIZER} belongs to the operator, which removes it once the exclusivity decision releases the sandbox; ` +
          "a replace must keep metadata.finalizers (kubectl apply and server-side apply keep it)'",
        reason: 'Forbidden',
      },
      {
        expression: `!(${adoptionLost})`,
        messageExpression:
          "'sandbox ' + oldObject.metadata.name + ': annotation " +
          `${ANNOTATIONS.adoptedFrom} may not be removed or changed before the operator has recorded the adoption ` +
          '(status.reconciliation): without it the sandbox would be taken for one created under the index, and ' +
          "its legacy walk would never run'",
        reason: 'Forbidden',
      },
    ],
  });
}
