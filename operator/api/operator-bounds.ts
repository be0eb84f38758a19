/**
 * Bounds on the operator's own identity (issues 15 and 26). RBAC has to grant it pods create/patch/delete,
 * budgets and Events across the namespaces it watches; admission narrows each right to what the controller
 * does with it, so a leaked operator token cannot swap an image, run a pod that reaches the node, delete other
 * pods, loosen other budgets or write Events about other objects:
 *
 * - pod CREATE: only a pod labelled `sandbox.agents.dev/sandbox=<name>`, controlled by that Sandbox (owner
 *   reference), with the exclusivity finalizer; passing the pod-template checks (template-checks.ts) at its
 *   namespace's level, as the Sandbox's template had to — the injected shell reaper, an init container, alone
 *   may keep its own capabilities (operator-reach.ts); never in a system namespace nor the release's own;
 * - pod UPDATE/PATCH: only of a sandbox pod, and only adding or removing the exclusivity finalizer — spec,
 *   labels, annotations and owner references stay as they were;
 * - pod DELETE: only sandbox pods, and an unowned pod holding a sandbox pod name (a restore's: it is replaced);
 * - workspace claims: created, changed and deleted as sandbox pods are (claim-protection.ts);
 * - budgets, Events, Sandboxes and references: only a sandbox's eviction guard, only Events about Sandboxes,
 *   of a Sandbox only its finalizer and cleanup fence, and its DELETE only for automatic cleanup; a reference
 *   only deleted, never written, each attached one's delete audited (operator-reach.ts);
 * - warm pools and sandbox claims (pool-reach.ts): Sandboxes created only with a pool or claim label, deleted
 *   also as unclaimed pool sandboxes, bound (claim label added, pool owner removed); references created only
 *   for a sandbox claim; of pools and claims only their status and the claim's finalizer;
 * - and, when the parameters list `watchNamespaces`, only in those namespaces; when they name a
 *   `managedNamespaceLabel` (`key=value`), only in namespaces an administrator labelled so (issue 26 #1's
 *   per-namespace opt-in).
 *
 * The operator users are the same parameter the pod protection reads (admission.ts). Whether a reference
 * delete is one the Sandbox's decision allows, admission cannot see (docs/security.md, "What is not bounded").
 */
import { EXCLUSIVITY_FINALIZER, GROUP, LABELS } from './names.ts';
import { POD_VARIABLES, policyBinding, validatingPolicy, type Validation } from './admission.ts';
import { REACH_AUDIT, REACH_RULES, REACH_VARIABLES, reachValidations } from './operator-reach.ts';
import { CLAIM_BOUNDS_RULES, CLAIM_BOUNDS_VARIABLES, claimBoundsValidations } from './claim-protection.ts';
import { NETWORK_REACH_RULES, NETWORK_REACH_VARIABLES, networkReachValidations } from './network-reach.ts';
import { POOL_REACH_VARIABLES } from './pool-reach.ts';

export const OPERATOR_BOUNDS_POLICY = `sandbox-operator-bounds.${GROUP}`;

const finalizer = `'${EXCLUSIVITY_FINALIZER}'`;
const controller = `r.kind == 'Sandbox' && r.apiVersion.startsWith('${GROUP}/') && r.?controller.orValue(false)`;
const others = (o: string) => `${o}.metadata.?finalizers.orValue([]).filter(f, f != ${finalizer})`;
const same = (field: string) =>
  `object.metadata.?${field}.orValue({}) == oldObject.metadata.?${field}.orValue({})`;

/**
 * An unowned pod that holds a sandbox's pod name and label, as a backup restore leaves one (Velero strips
 * owner references): the live turn replaces it (controller/live/pod-name.ts).
 */
const holdsPodName =
  "(variables.oldLabel != '' && !oldObject.metadata.?ownerReferences.orValue([]).exists(r, r.?controller.orValue(false)) && " +
  "oldObject.metadata.name.startsWith(variables.oldLabel + '-') && " +
  "oldObject.metadata.name.substring(size(variables.oldLabel) + 1).matches('^[0-9]+$'))";

/** A pod rule: passes anything that is not the operator acting on a pod. */
const onPods = (validation: Validation): Validation => ({
  ...validation,
  expression: `!variables.isOperator || !variables.onPods || ${validation.expression}`,
});

export function operatorBoundsPolicy(name: string = OPERATOR_BOUNDS_POLICY) {
  return validatingPolicy(name, {
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          resources: ['pods'],
        },
        ...REACH_RULES,
        ...CLAIM_BOUNDS_RULES,
        ...NETWORK_REACH_RULES,
      ],
    },
    variables: [
      ...POD_VARIABLES,
      {
        name: 'onPods',
        expression: "request.resource.group == '' && request.resource.resource == 'pods'",
      },
      {
        name: 'watched',
        expression:
          "params.?data.?watchNamespaces.orValue('') == '' || " +
          "request.namespace in params.?data.?watchNamespaces.orValue('').split(',')",
      },
      // The administrator's per-namespace opt-in: `key=value` (managedNamespaceLabel); a namespace without that
      // label is none of the operator's. A value that is not `key=value` matches no namespace (fail closed).
      { name: 'managedLabel', expression: "params.?data.?managedNamespaceLabel.orValue('').split('=')" },
      {
        name: 'managed',
        expression:
          "params.?data.?managedNamespaceLabel.orValue('') == '' || (size(variables.managedLabel) == 2 && " +
          'namespaceObject != null && ' +
          "namespaceObject.metadata.?labels[?variables.managedLabel[0]].orValue('') == variables.managedLabel[1])",
      },
      {
        name: 'controlledCreate',
        expression:
          `object.metadata.?ownerReferences.orValue([]).exists(r, ${controller} && r.name == variables.newLabel) && ` +
          `variables.newLabel != '' && variables.newFinalized`,
      },
      {
        name: 'onlyFinalizer',
        expression:
          `object.spec == oldObject.spec && ${same('labels')} && ${same('annotations')} && ` +
          `object.metadata.?ownerReferences.orValue([]) == oldObject.metadata.?ownerReferences.orValue([]) && ` +
          `${others('object')} == ${others('oldObject')}`,
      },
      ...REACH_VARIABLES,
      ...POOL_REACH_VARIABLES,
      ...CLAIM_BOUNDS_VARIABLES,
      ...NETWORK_REACH_VARIABLES,
    ],
    validations: [
      {
        expression: '!variables.isOperator || variables.watched',
        messageExpression:
          "'the sandbox operator acts only in the namespaces it watches (admission parameter watchNamespaces); refused ' + " +
          "request.operation + ' of ' + request.resource.resource + ' ' + variables.pod",
        reason: 'Forbidden',
      },
      {
        expression: '!variables.isOperator || variables.managed',
        messageExpression:
          "'the sandbox operator acts only in namespaces labelled ' + params.data.managedNamespaceLabel + " +
          "' (admission parameter managedNamespaceLabel); refused ' + request.operation + ' of ' + " +
          'request.resource.resource + " " + variables.pod',
        reason: 'Forbidden',
      },
      onPods({
        expression: "request.operation != 'CREATE' || variables.controlledCreate",
        messageExpression:
          `'the operator may create only pods labelled ${LABELS.sandbox}=<name>, controlled by that Sandbox ` +
          `(metadata.ownerReferences) and holding its finalizer ${EXCLUSIVITY_FINALIZER}; refused pod ' + variables.pod`,
        reason: 'Forbidden',
      }),
      onPods({
        expression: "request.operation != 'UPDATE' || (variables.oldOwned && variables.onlyFinalizer)",
        messageExpression:
          `'the operator may change only its finalizer ${EXCLUSIVITY_FINALIZER}, and only on sandbox pods; refused ' + ` +
          "'the update of pod ' + variables.pod",
        reason: 'Forbidden',
      }),
      onPods({
        expression: `request.operation != 'DELETE' || variables.oldOwned || ${holdsPodName}`,
        messageExpression:
          "'the operator may delete only sandbox pods (owned by a Sandbox), or an unowned pod that holds a " +
          "sandbox pod name (<sandbox>-<ordinal>, labelled for it); refused pod ' + variables.pod",
        reason: 'Forbidden',
      }),
      ...claimBoundsValidations(),
      ...[...reachValidations(), ...networkReachValidations()].map((validation) => ({
        ...validation,
        expression: `!variables.isOperator || ${validation.expression}`,
      })),
    ],
    auditAnnotations: REACH_AUDIT,
  });
}

/**
 * Without its parameters this policy cannot tell the operator from anyone else, and it matches every pod
 * write: denying then would stop every pod in the cluster, kube-system's included (issue 25, #9). So it is
 * skipped while they are missing; pod-protection still refuses every write to a sandbox pod meanwhile, the
 * operator's included, and the operator says at start that the parameters are missing (wiring/identity.ts).
 */
export const operatorBoundsBinding = (
  paramNamespace: string,
  policyName: string = OPERATOR_BOUNDS_POLICY,
  paramsName?: string,
) => policyBinding(policyName, paramNamespace, paramsName, 'Allow');
