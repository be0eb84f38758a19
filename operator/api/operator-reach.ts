/**
 * How far the operator's identity reaches beyond a sandbox pod's metadata (issue 26, item 1): what it may
 * put into a pod it creates, where, which budgets and Events it may write, what of a Sandbox it may change or
 * delete, and that of references it only deletes them and writes their `status.disruption`. Rules of the operator-bounds
 * policy (operator-bounds.ts), evaluated only for the operator users.
 *
 * A pod it creates passes the pod-template checks at its namespace's level, as the Sandbox's template had to
 * (template-policy.ts): the operator adds nothing a check refuses but the shell reaper in its privileged mode,
 * what reaper-bounds.ts spares where an administrator allowed that mode, and holds to its shape everywhere.
 * test/unit/api/operator-reach.test.ts holds the bounds to what the injection really adds.
 *
 * `hostNetwork` is checked too, unless the admission parameter `sandboxPodsOnHostNetwork` is `allowed`:
 * admission sees the pod after every mutating policy, and a cluster whose pods reach the API server only over
 * the node's loopback (the local control plane's real node, tools/local-cluster/node/loopback-api.ts) puts the
 * reaper's pods on the host network after the operator asked for them, which no bound can tell from the
 * operator's own request. Such a cluster says so in that parameter; no other needs it (docs/security.md).
 */
import {
  ANNOTATIONS,
  EXCLUSIVITY_FINALIZER,
  GROUP,
  LABELS,
  MANAGED_BY,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_WARM_POOL,
  SESSION_REFERENCE,
  VERSION,
} from './names.ts';
import type { Validation, Variable } from './admission.ts';
import { REAPER_VARIABLES, reaperSpared, reaperValidations } from './reaper-bounds.ts';
import { checkValidation, LEVEL_VARIABLES, POD_CHECKS } from './template-policy.ts';
import { PLACEMENT_VARIABLES, runtimeClassValidation } from './template-placement.ts';
import {
  BINDING_UPDATE,
  CLAIM_REFERENCE_CREATE,
  POOL_REACH_RULES,
  poolReachValidations,
  unclaimedPoolSandbox,
} from './pool-reach.ts';

/** Where the operator never creates anything: the cluster's own namespaces (and the release's, from params). */
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'] as const;

const quoted = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;
const statusOf = (o: string) => `${o}.?status.orValue({})`;

export const REACH_RULES = [
  {
    apiGroups: ['policy'],
    apiVersions: ['v1'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    resources: ['poddisruptionbudgets'],
  },
  { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['events'] },
  // The Sandbox, and of its status the record of an administrator's erase (the status subresource cannot
  // change spec or metadata). CREATE: a warm pool's or a sandbox claim's only (pool-reach.ts).
  {
    apiGroups: [GROUP],
    apiVersions: [VERSION],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    resources: [SANDBOX.plural, `${SANDBOX.plural}/status`],
  },
  // References: the operator deletes them (the worktree prune, the erases) and writes one status field, the
  // disruption notice; any other write would let a token turn an attached reference into a tombstone the prune
  // may take, or forge a session's turn.
  {
    apiGroups: [GROUP],
    apiVersions: [VERSION],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    resources: [SESSION_REFERENCE.plural, `${SESSION_REFERENCE.plural}/status`],
  },
  ...POOL_REACH_RULES,
];

/** The eviction guard of the sandbox its label names, exactly as the controller writes it (adapters/pod-api.ts). */
const guard = (o: string) => {
  const label = `${o}.metadata.?labels[?'${LABELS.sandbox}'].orValue('')`;
  return (
    `(${label} != '' && ${o}.metadata.?labels[?'${LABELS.managedBy}'].orValue('') == '${MANAGED_BY}' && ` +
    `${o}.metadata.name == ${label} + '-sandbox' && ` +
    `${o}.spec.?selector.?matchLabels.orValue({}) == {'${LABELS.sandbox}': ${label}} && ` +
    `!has(${o}.spec.selector.matchExpressions) && !has(${o}.spec.minAvailable) && ` +
    `${o}.spec.?maxUnavailable.orValue(1) == 0)`
  );
};

export const REACH_VARIABLES: readonly Variable[] = [
  { name: 'podCreate', expression: "variables.onPods && request.operation == 'CREATE'" },
  {
    name: 'onBudgets',
    expression: "request.resource.group == 'policy' && request.resource.resource == 'poddisruptionbudgets'",
  },
  { name: 'onEvents', expression: "request.resource.group == '' && request.resource.resource == 'events'" },
  {
    name: 'onSandboxes',
    expression: `request.resource.group == '${GROUP}' && request.resource.resource == '${SANDBOX.plural}'`,
  },
  {
    name: 'onReferences',
    expression: `request.resource.group == '${GROUP}' && request.resource.resource == '${SESSION_REFERENCE.plural}'`,
  },
  {
    name: 'attachedDeleted',
    expression:
      "variables.onReferences && request.operation == 'DELETE' && " +
      "oldObject.spec.?state.orValue('Attached') != 'Detached'",
  },
  // A status UPDATE that changes nothing but status.disruption (the notice of a drain: live/notices.ts).
  {
    name: 'onlyDisruptionNotice',
    expression:
      "request.?subResource.orValue('') == 'status' && request.operation == 'UPDATE' && " +
      'object.spec == oldObject.spec && ' +
      `${statusOf('object')}.all(k, k == 'disruption' || (k in ${statusOf('oldObject')} && ` +
      `${statusOf('oldObject')}[k] == ${statusOf('object')}[k])) && ` +
      `${statusOf('oldObject')}.all(k, k == 'disruption' || k in ${statusOf('object')})`,
  },
  {
    name: 'offLimits',
    expression: `request.namespace in ${quoted(SYSTEM_NAMESPACES)} || request.namespace == params.metadata.namespace`,
  },
  // What the pod-template checks read, of the pod being created.
  { name: 'template', expression: 'object.spec' },
  { name: 'annotations', expression: 'object.metadata.?annotations.orValue({})' },
  ...LEVEL_VARIABLES,
  ...PLACEMENT_VARIABLES,
  { name: 'podSecurity', expression: 'variables.template.?securityContext.orValue({})' },
  ...REAPER_VARIABLES,
];

const CHECKED = 'the operator may create only pods that pass the pod-template checks of their namespace: ';

export function reachValidations(): Validation[] {
  return [
    {
      // A Sandbox someone put there must still get and lose its finalizer: only what the operator makes is kept out.
      expression:
        "request.operation == 'DELETE' || (variables.onSandboxes && request.operation != 'CREATE') || " +
        '!variables.offLimits',
      messageExpression:
        "'the operator creates nothing in ' + request.namespace + ' (a system namespace, or the release’s own: " +
        "the admission parameters’ namespace); refused ' + request.operation + ' of ' + " +
        'request.resource.resource + " " + variables.pod',
      reason: 'Forbidden',
    },
    ...POD_CHECKS.map((check) =>
      checkValidation(check, {
        path: 'spec',
        metadataPath: 'metadata',
        skip:
          check.field === 'hostNetwork'
            ? "!variables.podCreate || params.?data.?sandboxPodsOnHostNetwork.orValue('') == 'allowed'"
            : '!variables.podCreate',
        exempt: reaperSpared,
        prefix: CHECKED,
      }),
    ),
    runtimeClassValidation('spec', '!variables.podCreate', CHECKED),
    ...reaperValidations(),
    {
      expression: `!variables.onBudgets || (request.operation == 'DELETE' ? ${guard('oldObject')} : ${guard('object')})`,
      messageExpression:
        `'the operator may write only the eviction guards of sandboxes (named <sandbox>-sandbox, labelled ` +
        `${LABELS.sandbox}=<sandbox> and ${LABELS.managedBy}=${MANAGED_BY}, maxUnavailable 0 over exactly that ` +
        "label); refused ' + request.operation + ' of poddisruptionbudget ' + variables.pod",
      reason: 'Forbidden',
    },
    {
      expression:
        `!variables.onEvents || (object.involvedObject.?kind.orValue('') in ${quoted(EVENT_KINDS)} && ` +
        `object.involvedObject.?apiVersion.orValue('').startsWith('${GROUP}/') && ` +
        "object.involvedObject.?namespace.orValue('') == request.namespace)",
      messageExpression:
        `'the operator records Events only about ${EVENT_KINDS.join(', ')} in the Event’s namespace; refused Event ' + variables.pod + ` +
        "' about ' + object.involvedObject.?kind.orValue('?') + ' ' + object.involvedObject.?name.orValue('?')",
      reason: 'Forbidden',
    },
    // The operator writes a Sandbox's metadata (finalizer, fences) and status, never its spec: a leaked token
    // must not set DeleteWhenUnreferenced (or a shorter TTL) on a sandbox whose owner chose Retain.
    {
      expression: "!variables.onSandboxes || request.operation != 'UPDATE' || object.spec == oldObject.spec",
      messageExpression:
        "'the operator never changes a Sandbox’s spec; refused the update of sandbox ' + variables.pod",
      reason: 'Forbidden',
    },
    // Of the metadata, only its finalizer and the cleanup fence (live/turn.ts, live/cleanup.ts, deletion/turn.ts):
    // not an owner reference the garbage collector would act on, not another annotation (an erase request
    // is the administrator's, and guard protection judges it), not a label.
    {
      expression:
        `!variables.onSandboxes || request.operation != 'UPDATE' || ${SANDBOX_METADATA_KEPT} || ` +
        BINDING_UPDATE,
      messageExpression:
        `'the operator changes only a Sandbox’s finalizer ${EXCLUSIVITY_FINALIZER} and annotation ` +
        `${ANNOTATIONS.cleanupFence}, and binds an unclaimed pool sandbox (label ${LABELS.sandboxClaim} added, ` +
        "its pool owner removed); refused the update of sandbox ' + variables.pod",
      reason: 'Forbidden',
    },
    // It deletes a Sandbox only for automatic cleanup (live/cleanup.ts): the owner chose DeleteWhenUnreferenced,
    // and the fence was raised first (the DELETE is preconditioned on the fenced version). A Retain sandbox is
    // never the operator's to delete, so a leaked token cannot delete one outright — but a pool's unclaimed one
    // (pool-reach.ts), and a sandbox claim's when the claim is deleted (controller/binding/release.ts): that
    // deletion is the ordinary decision, so the references of other sessions still keep it. Whether a cleanup's
    // sandbox is unreferenced, a policy cannot read: the delete review does (controller/delete-review.ts).
    {
      expression:
        "!variables.onSandboxes || request.operation != 'DELETE' || " +
        `(oldObject.spec.?cleanup.?policy.orValue('Retain') == 'DeleteWhenUnreferenced' && ` +
        `oldObject.metadata.?annotations[?'${ANNOTATIONS.cleanupFence}'].hasValue()) || ` +
        `${unclaimedPoolSandbox('oldObject')} || ${claimedSandbox('oldObject')}`,
      messageExpression:
        "'the operator deletes a Sandbox only for automatic cleanup (spec.cleanup.policy DeleteWhenUnreferenced, " +
        `after raising ${ANNOTATIONS.cleanupFence}), as an unclaimed warm pool sandbox (labelled ` +
        `${LABELS.warmPool}, not ${LABELS.sandboxClaim}) or as a deleted sandbox claim’s (labelled ` +
        `${LABELS.sandboxClaim}); refused the deletion of sandbox ' + variables.pod`,
      reason: 'Forbidden',
    },
    // Of a Sandbox's status, the record of an erase (status.capacity.erasedFor) stays, or becomes the request the
    // Sandbox carries (lifecycle.ts records it so): the reference review admits an erase's deletes only while
    // its request is not recorded, so a token that cleared the record would re-open every reference's delete.
    // And its first status (the one that records `reconciliation`) records a request the Sandbox already
    // carries as done (lifecycle.inheritedErase: a restore's or a GitOps re-create's annotation erases nothing);
    // a token writing a first status without it would turn that annotation into a pending erase.
    // A status computed just before an administrator changed the request is refused too; the turn the
    // refusal brings at once reads the new request.
    {
      expression:
        "!variables.onSandboxes || request.?subResource.orValue('') != 'status' || " +
        `((${erasedFor('object')} == ${erasedFor('oldObject')} || ` +
        `(${erasedFor('object')} != '' && ${erasedFor('object')} == ${eraseRequest})) && ` +
        `(oldObject.?status.?reconciliation.hasValue() || !object.?status.?reconciliation.hasValue() || ` +
        `${erasedFor('object')} == ${eraseRequest}))`,
      messageExpression:
        "'the operator records in status.capacity.erasedFor only the erase request the Sandbox carries (" +
        `${ANNOTATIONS.eraseReferences}), that one already with its first status, and never clears it; ` +
        "refused the status update of sandbox ' + variables.pod",
      reason: 'Forbidden',
    },
    // The record of the legacy reconciliation, once written, stays: a first status written again decides from the
    // annotations, so a token that removed it could mark as born with the marker an adopted sandbox whose
    // adopted-from annotation a replace dropped — a write the marker review never sees (marker-review.ts).
    {
      expression:
        "!variables.onSandboxes || request.?subResource.orValue('') != 'status' || " +
        '!oldObject.?status.?reconciliation.hasValue() || object.?status.?reconciliation.hasValue()',
      messageExpression:
        "'the operator never removes a Sandbox’s status.reconciliation; refused the status update of sandbox ' + " +
        'variables.pod',
      reason: 'Forbidden',
    },
    // The operator deletes references and writes nothing else of them but the disruption notice in their
    // status: a detach (state Detached) by its token would make an attached reference a tombstone the worktree
    // prune takes, and a forged turn would hold or hurry a drain's move.
    {
      expression:
        "!variables.onReferences || request.operation == 'DELETE' || variables.onlyDisruptionNotice || " +
        `(${CLAIM_REFERENCE_CREATE})`,
      messageExpression:
        "'the operator never creates or changes a SessionReference, but for a sandbox claim’s reference, " +
        `created labelled ${LABELS.sandboxClaim}; it only deletes them and writes their status.disruption; ` +
        "refused ' + request.operation + ' of sessionreference ' + variables.pod + " +
        "(request.?subResource.orValue('') == '' ? '' : ' (' + request.subResource + ')')",
      reason: 'Forbidden',
    },
    ...poolReachValidations(),
  ];
}

/** What the operator records Events about: its sandboxes, and the claims and pools it binds and keeps. */
const EVENT_KINDS = [SANDBOX.kind, SANDBOX_CLAIM.kind, SANDBOX_WARM_POOL.kind];
/** A Sandbox a sandbox claim bound (or a cold claim made). */
const claimedSandbox = (o: string) => `${o}.metadata.?labels[?'${LABELS.sandboxClaim}'].hasValue()`;

const erasedFor = (o: string) => `${o}.?status.?capacity.?erasedFor.orValue('')`;
const eraseRequest = `object.metadata.?annotations[?'${ANNOTATIONS.eraseReferences}'].orValue('')`;
const fence = `'${ANNOTATIONS.cleanupFence}'`;
const finalizer = `'${EXCLUSIVITY_FINALIZER}'`;
const finalizersBut = (o: string) => `${o}.metadata.?finalizers.orValue([]).filter(f, f != ${finalizer})`;
const annotationsOf = (o: string) => `${o}.metadata.?annotations.orValue({})`;
/** A Sandbox UPDATE that changes, of its metadata, at most the exclusivity finalizer and the cleanup fence. */
const SANDBOX_METADATA_KEPT =
  `object.metadata.?labels.orValue({}) == oldObject.metadata.?labels.orValue({}) && ` +
  `object.metadata.?ownerReferences.orValue([]) == oldObject.metadata.?ownerReferences.orValue([]) && ` +
  `${finalizersBut('object')} == ${finalizersBut('oldObject')} && ` +
  `${annotationsOf('object')}.all(k, k == ${fence} || ` +
  `(k in ${annotationsOf('oldObject')} && ${annotationsOf('oldObject')}[k] == ${annotationsOf('object')}[k])) && ` +
  `${annotationsOf('oldObject')}.all(k, k == ${fence} || k in ${annotationsOf('object')})`;

/**
 * Each delete of an attached reference by the operator's identity, in the audit log: the erases take them (the
 * administrator's, and the index of a sandbox released as exclusive), which admission cannot tell from a leaked
 * token's (docs/security.md, "What is not bounded").
 */
export const REACH_AUDIT = [
  {
    key: 'attached-reference-deleted',
    valueExpression:
      "variables.isOperator && variables.attachedDeleted ? request.userInfo.username + ' deleted attached " +
      "sessionreference ' + variables.pod + ' of sandbox ' + oldObject.spec.sandbox + ' (worktree ' + " +
      "oldObject.spec.?worktree.orValue('none') + ')' : ''",
  },
];
