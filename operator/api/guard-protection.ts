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
 * - the administrator annotations (issue 26 #7) — `erase-references`, which deletes every reference of the
 *   sandbox, other worktrees' attached ones included, and `adopted-from`, which sends it through the legacy
 *   walk — are set, changed or removed only by a member of an administrator group (the parameter
 *   `administratorGroups`; `system:masters` when it is absent), and each such change is audited. On CREATE
 *   only `adopted-from` counts: an erase value a Sandbox is created with is inherited, and erases nothing
 *   (lifecycle.ts `pendingErase`), so a GitOps tool may keep re-creating Sandboxes that carry one;
 * - the operator's cleanup fence is set, changed or lifted only by the operator users (or an administrator);
 * - the warm-pool and sandbox-claim labels of a Sandbox, and the sandbox-claim label of a SessionReference, are
 *   set, changed or removed only by the operator users (docs/warm-pools.md): a tenant who could set them could
 *   plant a sandbox into a pool, take a pool's sandbox without a claim's attach, or unclaim a bound one so a
 *   pool deletes it.
 *
 * A terminating namespace lifts the first two: its deletion is the administrator's, and it removes everything in it.
 * The budgets have their own policy, so it can select them by label (as pod protection selects pods): no other
 * budget in the cluster waits on the parameters.
 */
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER, GROUP, LABELS, MANAGED_BY } from './names.ts';
import { ADMINISTRATOR_VARIABLES, validatingPolicy } from './admission.ts';

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
const ADMINISTRATOR_ANNOTATIONS = [ANNOTATIONS.eraseReferences, ANNOTATIONS.adoptedFrom] as const;
const annotation = (o: string) => `${o}.metadata.?annotations[?k]`;
/** Which of `names` an UPDATE sets, changes or removes (CEL, `k` bound by filter). */
const changedByUpdate = (names: readonly string[]) =>
  `[${names.map((a) => `'${a}'`).join(', ')}].filter(k, ` +
  `${annotation('object')}.hasValue() != ${annotation('oldObject')}.hasValue() || ` +
  `(${annotation('object')}.hasValue() && ${annotation('object')}.value() != ${annotation('oldObject')}.value()))`;
/** The administrator annotations a request sets, changes or removes, by name. */
const administratorAnnotationsChanged =
  "request.operation == 'CREATE' ? " +
  `['${ANNOTATIONS.adoptedFrom}'].filter(k, ${annotation('object')}.hasValue()) : ` +
  changedByUpdate(ADMINISTRATOR_ANNOTATIONS);
/**
 * An UPDATE that sets, changes or lifts the cleanup fence: the operator's handshake with attaches during an
 * automatic cleanup or an erase (DESIGN "Kubernetes facts"). Set by someone else it refuses every attach;
 * lifted, it opens the window it closes. On CREATE it is a restore's copy, which the operator judges.
 */
const fenceChanged = `request.operation == 'UPDATE' && size(${changedByUpdate([ANNOTATIONS.cleanupFence])}) > 0`;
/** The labels only the operator writes, by resource (warm pools and sandbox claims). */
const OPERATOR_LABELS = {
  sandboxes: [LABELS.warmPool, LABELS.sandboxClaim],
  sessionreferences: [LABELS.sandboxClaim],
} as const;
const labelOf = (o: string) => `${o}.metadata.?labels[?k]`;
const labelsChanged = (names: readonly string[]) =>
  `[${names.map((n) => `'${n}'`).join(', ')}].filter(k, request.operation == 'CREATE' ? ` +
  `${labelOf('object')}.hasValue() : (${labelOf('object')}.hasValue() != ${labelOf('oldObject')}.hasValue() || ` +
  `(${labelOf('object')}.hasValue() && ${labelOf('object')}.value() != ${labelOf('oldObject')}.value())))`;
/** The operator's labels a request sets, changes or removes. */
const operatorLabelsChanged =
  `request.resource.resource == 'sandboxes' ? ${labelsChanged(OPERATOR_LABELS.sandboxes)} : ` +
  labelsChanged(OPERATOR_LABELS.sessionreferences);
const onSandboxes = "request.resource.resource == 'sandboxes'";
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
        // Its status subresource stores label changes too: a relabelled guard would no longer be guarded. Only
        // such changes are refused there; the status itself is its status writers' (keptAsRead below).
        {
          apiGroups: ['policy'],
          apiVersions: ['v1'],
          operations: ['UPDATE'],
          resources: ['poddisruptionbudgets/status'],
        },
      ],
    },
    variables: [
      ...GUARD_VARIABLES,
      // What the guard is found and kept by. A status write that leaves it alone is its status writers'
      // (the disruption controller's; the eviction API's): refused, the guard would never be observed.
      {
        name: 'keptAsRead',
        expression:
          "request.?subResource.orValue('') == 'status' && " +
          ['labels', 'finalizers', 'ownerReferences']
            .map((field) => `object.metadata.?${field} == oldObject.metadata.?${field}`)
            .join(' && '),
      },
    ],
    validations: [
      {
        expression: 'variables.isOperator || variables.namespaceTerminating || variables.keptAsRead',
        messageExpression:
          "'poddisruptionbudget ' + oldObject.metadata.name + ' is the eviction guard of Sandbox ' + " +
          `oldObject.metadata.labels[${label}] + ' and is kept by the operator until the sandbox is released: delete the Sandbox instead'`,
        reason: 'Forbidden',
      },
    ],
  });
}

/** The variables of the Sandbox half: who administers, and what of theirs a request changes. */
const SANDBOX_ADMINISTRATOR_VARIABLES = [
  ...ADMINISTRATOR_VARIABLES,
  { name: 'administratorChanges', expression: administratorAnnotationsChanged },
];

/**
 * The Sandbox's exclusivity finalizer, its adoption annotation and its administrator annotations (every
 * Sandbox is ours: no selector).
 */
export function guardProtectionPolicy(name: string = GUARD_PROTECTION_POLICY) {
  const updating = (expression: string) => `request.operation == 'UPDATE' && (${expression})`;
  return validatingPolicy(name, {
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [GROUP],
          apiVersions: ['*'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['sandboxes', 'sessionreferences'],
        },
      ],
    },
    matchConditions: [
      {
        name: 'guard',
        expression:
          `(${onSandboxes} && ((${updating(`(${finalizerStripped}) || (${adoptionLost})`)}) || ` +
          `size(${administratorAnnotationsChanged}) > 0 || (${fenceChanged}))) || ` +
          `size(${operatorLabelsChanged}) > 0`,
      },
    ],
    variables: [
      ...GUARD_VARIABLES,
      ...SANDBOX_ADMINISTRATOR_VARIABLES,
      { name: 'operatorLabelChanges', expression: operatorLabelsChanged },
    ],
    validations: [
      {
        expression: 'size(variables.operatorLabelChanges) == 0 || variables.isOperator',
        messageExpression:
          "request.resource.resource + ' ' + object.metadata.name + ': label ' + " +
          "variables.operatorLabelChanges.join(', ') + ' is the operator’s: it is set when a warm pool makes a " +
          "sandbox or a sandbox claim binds one (docs/warm-pools.md), and only the operator may set, change or remove it'",
        reason: 'Forbidden',
      },
      {
        expression: `!(${updating(finalizerStripped)}) || variables.isOperator || variables.namespaceTerminating`,
        messageExpression:
          "'sandbox ' + oldObject.metadata.name + (has(oldObject.metadata.deletionTimestamp) ? ' is being deleted' : '') + ': its finalizer " +
          `${EXCLUSIVITY_FINALIZER} belongs to the operator, which removes it once the exclusivity decision releases the sandbox; ` +
          "a replace must keep metadata.finalizers (kubectl apply and server-side apply keep it)'",
        reason: 'Forbidden',
      },
      {
        expression: `!(${updating(adoptionLost)})`,
        messageExpression:
          "'sandbox ' + oldObject.metadata.name + ': annotation " +
          `${ANNOTATIONS.adoptedFrom} may not be removed or changed before the operator has recorded the adoption ` +
          '(status.reconciliation): without it the sandbox would be taken for one created under the index, and ' +
          "its legacy walk would never run'",
        reason: 'Forbidden',
      },
      {
        expression: 'size(variables.administratorChanges) == 0 || variables.isAdministrator',
        messageExpression:
          "'sandbox ' + object.metadata.name + ': annotation ' + variables.administratorChanges.join(', ') + " +
          "' may be set or changed only by an administrator (a member of a group in the admission parameter " +
          "administratorGroups: ' + variables.administratorGroups.join(', ') + ')'",
        reason: 'Forbidden',
      },
      {
        expression: `!(${fenceChanged}) || variables.isOperator || variables.isAdministrator`,
        messageExpression:
          "'sandbox ' + object.metadata.name + ': annotation " +
          `${ANNOTATIONS.cleanupFence} is the operator’s fence for attaches during an automatic cleanup or an erase, ` +
          "and may be set or lifted only by the operator (or an administrator)'",
        reason: 'Forbidden',
      },
    ],
    auditAnnotations: [
      {
        key: 'administrator-annotation',
        valueExpression:
          "size(variables.administratorChanges) > 0 && variables.isAdministrator ? request.userInfo.username + ' set ' + " +
          "variables.administratorChanges.map(k, k + '=' + object.metadata.?annotations[?k].orValue('(removed)')).join(', ') + " +
          "' on sandbox ' + request.namespace + '/' + object.metadata.name : ''",
      },
    ],
  });
}
