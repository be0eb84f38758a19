/**
 * Bounds on the operator's own identity (issue 15). RBAC has to grant it pods create/patch/delete across
 * the namespaces it watches; admission narrows that to what the controller does, so a leaked operator token
 * cannot swap an image, run another ServiceAccount, or delete other pods:
 *
 * - CREATE: only a pod labelled `sandbox.agents.dev/sandbox=<name>`, controlled by that Sandbox (owner
 *   reference), with the exclusivity finalizer;
 * - UPDATE/PATCH: only of a sandbox pod, and only adding or removing the exclusivity finalizer — spec,
 *   labels, annotations and owner references stay as they were;
 * - DELETE: only sandbox pods;
 * - and, when the parameters list `watchNamespaces`, only in those namespaces.
 *
 * The operator users are the same parameter the pod protection reads (admission.ts).
 */
import { EXCLUSIVITY_FINALIZER, GROUP, LABELS } from './names.ts';
import { POD_VARIABLES, policyBinding, validatingPolicy } from './admission.ts';

export const OPERATOR_BOUNDS_POLICY = `sandbox-operator-bounds.${GROUP}`;

const finalizer = `'${EXCLUSIVITY_FINALIZER}'`;
const controller = `r.kind == 'Sandbox' && r.apiVersion.startsWith('${GROUP}/') && r.?controller.orValue(false)`;
const others = (o: string) => `${o}.metadata.?finalizers.orValue([]).filter(f, f != ${finalizer})`;
const same = (field: string) =>
  `object.metadata.?${field}.orValue({}) == oldObject.metadata.?${field}.orValue({})`;

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
      ],
    },
    variables: [
      ...POD_VARIABLES,
      {
        name: 'watched',
        expression:
          "params.?data.?watchNamespaces.orValue('') == '' || " +
          "request.namespace in params.?data.?watchNamespaces.orValue('').split(',')",
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
    ],
    validations: [
      {
        expression: '!variables.isOperator || variables.watched',
        messageExpression:
          "'the sandbox operator acts only in the namespaces it watches (admission parameter watchNamespaces); refused ' + " +
          "request.operation + ' of pod ' + variables.pod",
        reason: 'Forbidden',
      },
      {
        expression: "!variables.isOperator || request.operation != 'CREATE' || variables.controlledCreate",
        messageExpression:
          `'the operator may create only pods labelled ${LABELS.sandbox}=<name>, controlled by that Sandbox ` +
          `(metadata.ownerReferences) and holding its finalizer ${EXCLUSIVITY_FINALIZER}; refused pod ' + variables.pod`,
        reason: 'Forbidden',
      },
      {
        expression:
          "!variables.isOperator || request.operation != 'UPDATE' || (variables.oldOwned && variables.onlyFinalizer)",
        messageExpression:
          `'the operator may change only its finalizer ${EXCLUSIVITY_FINALIZER}, and only on sandbox pods; refused ' + ` +
          "'the update of pod ' + variables.pod",
        reason: 'Forbidden',
      },
      {
        expression: "!variables.isOperator || request.operation != 'DELETE' || variables.oldOwned",
        messageExpression:
          "'the operator may delete only sandbox pods (owned by a Sandbox); refused pod ' + variables.pod",
        reason: 'Forbidden',
      },
    ],
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
