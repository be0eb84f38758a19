/**
 * What the shell reaper's rights may do (issue 12; issue 26 #4): RBAC lets whoever holds them patch the status
 * of any SessionReference in the namespace and create any Event there. These two policies narrow them to what
 * a reaper owns: only `status.shells`, only on references of the sandbox whose pod the token is bound to (the
 * API server puts the pod's name, `<sandbox>-<ordinal>`, in the user's extra
 * `authentication.kubernetes.io/pod-name`), and Events only about SessionReferences, reported as that pod.
 *
 * Who is narrowed is chosen by rights, not by the account's name. A template may keep its own ServiceAccount
 * (operator/sidecar/injection/apply.ts), so the sidecar's token is that account's, the reaper's rights are
 * bound to it, and its token is also mounted into the agent containers; a list of names would miss every
 * account an administrator binds by hand. Narrowed is any ServiceAccount that holds the reaper's rights
 * without the agent host's — it may not create SessionReferences, which every agent host must
 * (docs/client.md) — nor the operator's (it may not delete them: the operator's account patches references'
 * status too, for the drain notice, and the operator-bounds policy bounds it instead) — and always the reaper's
 * own account. An agent host, in a pod or not, keeps writing
 * `status.turn` and `status.endedTurns` of any reference. An account holding the host's rights too is not
 * narrowed: its agent could as well delete another sandbox's references, so a template must never keep an
 * agent host's account (docs/security.md).
 *
 * A ValidatingAdmissionPolicy cannot read the token's pod (its labels, its owner), only the claim's name, so
 * the sandbox is read from the name. Neither policy reads parameters: a missing ConfigMap changes nothing.
 */
import { GROUP, SESSION_REFERENCE, SHELL_REAPER_ACCOUNT } from './names.ts';

export const REAPER_STATUS_POLICY = `sandbox-shell-reaper-status.${GROUP}`;
export const REAPER_EVENTS_POLICY = `sandbox-shell-reaper-events.${GROUP}`;
/** The reaper's own account as a CEL string literal (the chart fills in shellReaper.serviceAccountName). */
export const DEFAULT_REAPER_ACCOUNT_LITERAL = `'${SHELL_REAPER_ACCOUNT}'`;

const serviceAccount = "request.userInfo.username.startsWith('system:serviceaccount:')";
const references = `authorizer.group('${GROUP}').resource('${SESSION_REFERENCE.plural}').namespace(request.namespace)`;
const mayCreateReferences = `${references}.check('create').allowed()`;
/** The operator's right (it deletes references, and writes their status.disruption): never a reaper's. */
const mayDeleteReferences = `${references}.check('delete').allowed()`;
const mayPatchStatus = `${references}.subresource('status').check('patch').allowed()`;

const variables = (narrowed: string, reaperAccount: string) => [
  { name: 'reaperAccount', expression: reaperAccount },
  {
    name: 'isReaperAccount',
    expression:
      "request.userInfo.username == 'system:serviceaccount:' + request.namespace + ':' + variables.reaperAccount",
  },
  { name: 'narrowed', expression: `variables.isReaperAccount || (${narrowed})` },
  {
    name: 'pods',
    expression: "request.userInfo.?extra[?'authentication.kubernetes.io/pod-name'].orValue([])",
  },
  {
    name: 'who',
    expression:
      "'the shell reaper\\'s rights (' + request.userInfo.username + ', of pod ' + " +
      "(size(variables.pods) == 0 ? '(none: the token is bound to no pod)' : variables.pods[0]) + ')'",
  },
];

const policy = (name: string, spec: object) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name },
  spec: {
    failurePolicy: 'Fail',
    // Users (people, out-of-cluster hosts) hold no pod token; only service accounts are narrowed.
    matchConditions: [{ name: 'service-account', expression: serviceAccount }],
    ...spec,
  },
});

/** Status writes: only status.shells, only of references whose sandbox owns the token's pod. */
export function reaperStatusPolicy(
  name: string = REAPER_STATUS_POLICY,
  reaperAccount: string = DEFAULT_REAPER_ACCOUNT_LITERAL,
) {
  return policy(name, {
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [GROUP],
          apiVersions: ['*'],
          operations: ['UPDATE'],
          resources: [`${SESSION_REFERENCE.plural}/status`],
        },
      ],
    },
    // The request already holds the status right (RBAC answered first): without the host's create, a reaper.
    variables: variables(`!${mayCreateReferences} && !${mayDeleteReferences}`, reaperAccount),
    validations: [
      {
        expression:
          '!variables.narrowed || (object.?status.?turn == oldObject.?status.?turn && ' +
          'object.?status.?endedTurns == oldObject.?status.?endedTurns && ' +
          'object.?status.?detachedAt == oldObject.?status.?detachedAt && ' +
          'object.?status.?disruption == oldObject.?status.?disruption)',
        messageExpression:
          "variables.who + ' may write only status.shells; status.turn, status.endedTurns and " +
          "status.detachedAt are the agent host\\'s (who may also create SessionReferences), status.disruption " +
          "the operator\\'s'",
        reason: 'Forbidden',
      },
      {
        expression:
          "!variables.narrowed || variables.pods.exists(p, p.matches('^' + object.spec.sandbox + '-[0-9]+$'))",
        messageExpression:
          "variables.who + ' may write only the status of its own sandbox\\'s references, not of sandbox ' + " +
          'object.spec.sandbox',
        reason: 'Forbidden',
      },
    ],
  });
}

/** Events: only about SessionReferences, and only with the token's pod as the reporter. */
export function reaperEventsPolicy(
  name: string = REAPER_EVENTS_POLICY,
  reaperAccount: string = DEFAULT_REAPER_ACCOUNT_LITERAL,
) {
  return policy(name, {
    matchConstraints: {
      resourceRules: [
        { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['events'] },
      ],
    },
    // Every service account's Event passes here; only one holding the reaper's status right is asked further.
    // Not `&& !mayDeleteReferences` as the status policy: a third authorizer check exceeds CEL's cost limit
    // (every Event of a narrowed account then fails with 422). Open: the operator's ServiceAccount, which
    // patches references' status for the drain notice, is narrowed here (its Events about Sandboxes refused).
    variables: variables(`${mayPatchStatus} && !${mayCreateReferences}`, reaperAccount),
    validations: [
      {
        expression:
          "!variables.narrowed || (object.involvedObject.?kind.orValue('') == 'SessionReference' && " +
          `object.involvedObject.?apiVersion.orValue('').startsWith('${GROUP}/'))`,
        messageExpression: "variables.who + ' may record Events only about SessionReferences'",
        reason: 'Forbidden',
      },
      {
        expression:
          "!variables.narrowed || variables.pods.exists(p, object.?reportingInstance.orValue('') == p)",
        messageExpression:
          "variables.who + ' may record Events only as itself (reportingInstance), not as ' + " +
          "object.?reportingInstance.orValue('(none)')",
        reason: 'Forbidden',
      },
    ],
  });
}

/** Binds a policy with no parameters; names default to the kubectl-only install's. */
export function reaperRightsBinding(policyName: string) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policyName },
    spec: { policyName, validationActions: ['Deny'] },
  };
}
