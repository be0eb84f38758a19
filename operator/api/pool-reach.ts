/**
 * What the operator's identity may do for warm pools and sandbox claims (docs/warm-pools.md), as rules of the
 * operator-bounds policy (operator-bounds.ts, operator-reach.ts), evaluated only for the operator users:
 *
 * - create a Sandbox only labelled with a warm pool or a sandbox claim (a pool's, or a cold claim's);
 * - delete a Sandbox outside automatic cleanup only while it is an unclaimed pool sandbox (a pool shrinking or
 *   recreating; the DELETE carries a uid and resourceVersion precondition, so a binding that came first wins);
 * - change a Sandbox's labels and owners only to bind it: an unclaimed pool sandbox gains the sandbox-claim
 *   label and loses its pool owner, nothing else;
 * - create a SessionReference only labelled with a sandbox claim (the binding's attach);
 * - write a pool's status and a sandbox claim's status and finalizer, never their spec.
 */
import {
  GROUP,
  LABELS,
  SANDBOX_CLAIM,
  SANDBOX_CLAIM_FINALIZER,
  SANDBOX_WARM_POOL,
  VERSION,
} from './names.ts';
import type { Validation, Variable } from './admission.ts';

const label = (o: string, name: string) => `${o}.metadata.?labels[?'${name}']`;
const labelsOf = (o: string) => `${o}.metadata.?labels.orValue({})`;

/** A pool's sandbox no sandbox claim has bound: the only kind a pool deletes. */
export const unclaimedPoolSandbox = (o: string) =>
  `(${label(o, LABELS.warmPool)}.hasValue() && !${label(o, LABELS.sandboxClaim)}.hasValue())`;

/** Labelled with a warm pool or a sandbox claim: the only Sandboxes the operator makes. */
export const poolOrClaimLabelled = (o: string) =>
  `(${label(o, LABELS.warmPool)}.hasValue() || ${label(o, LABELS.sandboxClaim)}.hasValue())`;

const claimLabel = `'${LABELS.sandboxClaim}'`;
const poolOwner = `r.kind == '${SANDBOX_WARM_POOL.kind}' && r.apiVersion.startsWith('${GROUP}/')`;

/**
 * A Sandbox UPDATE that binds it: an unclaimed pool sandbox gains the sandbox-claim label (its other labels
 * kept) and loses its pool owner (its other owners kept); its annotations and finalizers stay as they were.
 */
export const BINDING_UPDATE =
  `(${unclaimedPoolSandbox('oldObject')} && ${label('object', LABELS.sandboxClaim)}.orValue('') != '' && ` +
  'object.metadata.?annotations == oldObject.metadata.?annotations && ' +
  'object.metadata.?finalizers == oldObject.metadata.?finalizers && ' +
  `${labelsOf('object')}.all(k, k == ${claimLabel} || ` +
  `(k in ${labelsOf('oldObject')} && ${labelsOf('oldObject')}[k] == ${labelsOf('object')}[k])) && ` +
  `${labelsOf('oldObject')}.all(k, k in ${labelsOf('object')}) && ` +
  `object.metadata.?ownerReferences.orValue([]) == ` +
  `oldObject.metadata.?ownerReferences.orValue([]).filter(r, !(${poolOwner})))`;

/** A SessionReference CREATE the operator may make: a sandbox claim's, labelled with it. */
export const CLAIM_REFERENCE_CREATE =
  `request.operation == 'CREATE' && request.?subResource.orValue('') == '' && ` +
  `${label('object', LABELS.sandboxClaim)}.orValue('') != ''`;

export const POOL_REACH_RULES = [
  {
    apiGroups: [GROUP],
    apiVersions: [VERSION],
    operations: ['UPDATE'],
    resources: [SANDBOX_WARM_POOL.plural, SANDBOX_CLAIM.plural],
  },
];

export const POOL_REACH_VARIABLES: readonly Variable[] = [
  {
    name: 'onPoolsOrClaims',
    expression:
      `request.resource.group == '${GROUP}' && ` +
      `request.resource.resource in ['${SANDBOX_WARM_POOL.plural}', '${SANDBOX_CLAIM.plural}']`,
  },
];

const finalizer = `'${SANDBOX_CLAIM_FINALIZER}'`;
const finalizersBut = (o: string) => `${o}.metadata.?finalizers.orValue([]).filter(f, f != ${finalizer})`;
const same = (field: string) => `object.metadata.?${field} == oldObject.metadata.?${field}`;
/** A sandbox claim UPDATE that changes at most its sandbox-claim finalizer. */
const ONLY_CLAIM_FINALIZER =
  `request.resource.resource == '${SANDBOX_CLAIM.plural}' && object.spec == oldObject.spec && ` +
  `${same('labels')} && ${same('annotations')} && ${same('ownerReferences')} && ` +
  `${finalizersBut('object')} == ${finalizersBut('oldObject')}`;

export function poolReachValidations(): Validation[] {
  return [
    {
      expression: `!variables.onSandboxes || request.operation != 'CREATE' || ${poolOrClaimLabelled('object')}`,
      messageExpression:
        `'the operator creates only a warm pool’s or a sandbox claim’s Sandboxes (labelled ${LABELS.warmPool} or ` +
        `${LABELS.sandboxClaim}); refused sandbox ' + variables.pod`,
      reason: 'Forbidden',
    },
    {
      expression:
        "!variables.onPoolsOrClaims || request.?subResource.orValue('') == 'status' || " +
        ONLY_CLAIM_FINALIZER,
      messageExpression:
        "'the operator writes only the status of warm pools and sandbox claims, and a sandbox claim’s finalizer " +
        `${SANDBOX_CLAIM_FINALIZER}; refused the update of ' + request.resource.resource + ' ' + variables.pod`,
      reason: 'Forbidden',
    },
  ];
}
