/**
 * The persistent workspace's claims are guarded like the sandbox's pods (issue 27): a claim owned by a Sandbox
 * (a controller owner reference, which only the operator sets) holds a workspace that only an Exclusive verdict
 * may delete. For anyone but the operator users:
 *
 * - DELETE of a sandbox claim is refused unless it is already being deleted, or carries the deletion-override
 *   annotation (audited);
 * - UPDATE may not change its sandbox label, the exclusivity finalizer or its owner references unless the
 *   override is on the claim (audited). Its spec is left to the API server's own rules: the volume binder
 *   writes `spec.volumeName`, and a resize is the workspace owner's to make;
 * - CREATE of a claim owned by a Sandbox is refused: a claim squatted under a sandbox's claim name would
 *   otherwise be mounted as its workspace.
 *
 * What the operator's own identity may do with claims (operator-bounds.ts): create only a labelled claim
 * controlled by that Sandbox with the finalizer; change only the metadata of a sandbox claim or of one
 * labelled for a sandbox (its guards, its adoption, its release), never a spec or an annotation; delete only
 * sandbox claims.
 */
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER, GROUP, LABELS } from './names.ts';
import { POD_VARIABLES, SANDBOX_POD_SELECTOR, validatingPolicy, type Validation } from './admission.ts';

export const CLAIM_PROTECTION_POLICY = `sandbox-claim-protection.${GROUP}`;

const CLAIMS = 'persistentvolumeclaims';
const toOverride = `annotate the claim with ${ANNOTATIONS.deletionOverride}=<reason> to override`;

/** What a non-operator UPDATE changed of a claim's guards, as field paths (empty: none). */
const changedGuards =
  `['metadata.labels[${LABELS.sandbox}]'].filter(f, variables.oldLabel != variables.newLabel) + ` +
  `['metadata.finalizers[${EXCLUSIVITY_FINALIZER}]'].filter(f, variables.oldFinalized != variables.newFinalized) + ` +
  `['metadata.ownerReferences'].filter(f, !variables.sameOwners)`;

export function claimProtectionPolicy(name: string = CLAIM_PROTECTION_POLICY) {
  return validatingPolicy(name, {
    matchConstraints: {
      // Every sandbox claim carries the label (the operator creates it so, and it may not change): no other
      // claim's write waits on this policy or its parameters.
      objectSelector: SANDBOX_POD_SELECTOR,
      resourceRules: [
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          resources: [CLAIMS],
        },
        // The status subresource stores metadata changes too.
        { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: [`${CLAIMS}/status`] },
      ],
    },
    variables: [
      ...POD_VARIABLES,
      {
        name: 'changed',
        expression: `request.operation == 'UPDATE' ? ${changedGuards} : [''].filter(f, false)`,
      },
    ],
    validations: [
      {
        expression:
          "request.operation != 'DELETE' || !variables.oldOwned || has(oldObject.metadata.deletionTimestamp) || " +
          "variables.isOperator || variables.oldOverride != ''",
        messageExpression:
          "'persistentvolumeclaim ' + oldObject.metadata.name + ' is the workspace of Sandbox ' + variables.owner + " +
          `' and is kept until its exclusivity decision releases it: delete the Sandbox instead, or ${toOverride}'`,
        reason: 'Forbidden',
      },
      {
        expression:
          "request.operation != 'UPDATE' || variables.isOperator || !(variables.oldOwned || variables.newOwned) || " +
          "(variables.oldOwned && variables.newOverride != '') || size(variables.changed) == 0",
        messageExpression:
          "'persistentvolumeclaim ' + variables.pod + (variables.oldOwned ? ' of Sandbox ' + variables.owner : '') + " +
          "': ' + variables.changed.join(', ') + ' may be changed only by the sandbox operator (on a sandbox claim, " +
          `${toOverride} first)'`,
        reason: 'Forbidden',
      },
      {
        expression: "request.operation != 'CREATE' || variables.isOperator || !variables.newOwned",
        messageExpression:
          "'persistentvolumeclaim ' + variables.pod + ': only the sandbox operator creates claims owned by a Sandbox " +
          "(metadata.ownerReferences)'",
        reason: 'Forbidden',
      },
    ],
    auditAnnotations: [
      {
        key: 'override-delete',
        valueExpression:
          "request.operation == 'DELETE' && variables.oldOwned && !variables.isOperator && variables.oldOverride != '' && " +
          "!has(oldObject.metadata.deletionTimestamp) ? request.userInfo.username + ' deleted persistentvolumeclaim ' + " +
          "variables.pod + ' of Sandbox ' + variables.owner + ' under the deletion override: ' + variables.oldOverride : ''",
      },
      {
        key: 'override-update',
        valueExpression:
          "request.operation == 'UPDATE' && variables.oldOwned && !variables.isOperator && variables.newOverride != '' && " +
          "size(variables.changed) > 0 ? request.userInfo.username + ' changed ' + variables.changed.join(', ') + " +
          "' of persistentvolumeclaim ' + variables.pod + ' of Sandbox ' + variables.owner + ' under the deletion " +
          "override: ' + variables.newOverride : ''",
      },
    ],
  });
}

/** The operator bounds' rules and checks for claims (operator-bounds.ts): see the header. */
export const CLAIM_BOUNDS_RULES = [
  { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: [CLAIMS] },
];

export const CLAIM_BOUNDS_VARIABLES = [
  {
    name: 'onClaims',
    expression: `request.resource.group == '' && request.resource.resource == '${CLAIMS}'`,
  },
];

/** Each passes anything that is not the operator writing a claim; `controlledCreate` is operator-bounds.ts's. */
export const claimBoundsValidations = (): Validation[] =>
  [
    {
      expression: "request.operation != 'CREATE' || variables.controlledCreate",
      messageExpression:
        `'the operator may create only persistentvolumeclaims labelled ${LABELS.sandbox}=<name>, controlled by ` +
        `that Sandbox (metadata.ownerReferences) and holding its finalizer ${EXCLUSIVITY_FINALIZER}; refused ` +
        "persistentvolumeclaim ' + variables.pod",
      reason: 'Forbidden' as const,
    },
    {
      expression:
        "request.operation != 'UPDATE' || ((variables.oldOwned || variables.oldLabel != '') && " +
        'object.spec == oldObject.spec && ' +
        'object.metadata.?annotations.orValue({}) == oldObject.metadata.?annotations.orValue({}))',
      messageExpression:
        "'the operator may change only the label, finalizer and owner references of a sandbox claim (or one " +
        "labelled for a sandbox), never its spec or annotations; refused the update of persistentvolumeclaim ' + variables.pod",
      reason: 'Forbidden' as const,
    },
    {
      expression: "request.operation != 'DELETE' || variables.oldOwned",
      messageExpression:
        "'the operator may delete only sandbox claims (owned by a Sandbox); refused persistentvolumeclaim ' + variables.pod",
      reason: 'Forbidden' as const,
    },
  ].map((validation) => ({
    ...validation,
    expression: `!variables.isOperator || !variables.onClaims || ${validation.expression}`,
  }));
