/**
 * The operator's reach over NetworkPolicies (issue 26, network isolation): rules of the operator-bounds
 * policy (operator-bounds.ts), evaluated only for the operator users. It may create, update and delete only
 * a sandbox's own policy, as the controller writes it (network-policy.ts):
 *
 * - named `<sandbox>-sandbox`, labelled `sandbox.agents.dev/sandbox=<sandbox>` and managed by the operator,
 *   owned by nothing (network-policy.ts says why) or, as earlier versions wrote it, controlled by that Sandbox
 *   alone, selecting exactly that sandbox's pods, both policy types;
 * - no ingress ipBlock; its egress ipBlocks only the internet with every blocked range excepted, or single
 *   addresses on single TCP ports (the API server's endpoints) or on port 53 (a node-local DNS cache's).
 *
 * An UPDATE is judged by what it writes, not by what it replaces: a policy a tenant squatted under the name is
 * put back into the operator's form. Bounded, not closed: a leaked token can still open a single address on a
 * TCP port or on DNS, or in-cluster peers, for a sandbox's pods (docs/security.md, "What is not bounded").
 */
import { GROUP, LABELS, MANAGED_BY } from './names.ts';
import type { Validation, Variable } from './admission.ts';
import { BLOCKED_IPV4, BLOCKED_IPV6 } from './network-policy.ts';

export const NETWORK_REACH_RULES = [
  {
    apiGroups: ['networking.k8s.io'],
    apiVersions: ['v1'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    resources: ['networkpolicies'],
  },
];

export const NETWORK_REACH_VARIABLES: readonly Variable[] = [
  {
    name: 'onNetworkPolicies',
    expression:
      "request.resource.group == 'networking.k8s.io' && request.resource.resource == 'networkpolicies'",
  },
];

const quoted = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;

/** An egress ipBlock the controller writes: the internet minus every blocked range, or one address. */
const allowedBlock = (b: string) =>
  `((${b}.cidr == '0.0.0.0/0' && ${quoted(BLOCKED_IPV4)}.all(x, x in ${b}.?except.orValue([]))) || ` +
  `(${b}.cidr == '::/0' && ${quoted(BLOCKED_IPV6)}.all(x, x in ${b}.?except.orValue([]))) || ` +
  `${b}.cidr.endsWith('/32') || ${b}.cidr.endsWith('/128'))`;

/**
 * A host block opens only TCP ports (the API server's) or DNS (port 53, a node-local cache's address), never
 * every port and protocol.
 */
const egressOk = (o: string) =>
  `${o}.spec.?egress.orValue([]).all(r, r.?to.orValue([]).all(p, !has(p.ipBlock) || (${allowedBlock('p.ipBlock')} && ` +
  `(p.ipBlock.cidr in ['0.0.0.0/0', '::/0'] || (size(r.?ports.orValue([])) > 0 && ` +
  `r.ports.all(q, has(q.port) && !has(q.endPort) && (q.?protocol.orValue('TCP') == 'TCP' || ` +
  `(q.protocol == 'UDP' && q.port == 53))))))))`;

const managedPolicy = (o: string) => {
  const label = `${o}.metadata.?labels[?'${LABELS.sandbox}'].orValue('')`;
  return (
    `(${label} != '' && ${o}.metadata.?labels[?'${LABELS.managedBy}'].orValue('') == '${MANAGED_BY}' && ` +
    `${o}.metadata.name == ${label} + '-sandbox' && ` +
    `${o}.metadata.?ownerReferences.orValue([]).all(r, r.kind == 'Sandbox' && ` +
    `r.apiVersion.startsWith('${GROUP}/') && r.?controller.orValue(false) && r.name == ${label}) && ` +
    `${o}.spec.podSelector.?matchLabels.orValue({}) == {'${LABELS.sandbox}': ${label}} && ` +
    `!has(${o}.spec.podSelector.matchExpressions) && ` +
    `'Ingress' in ${o}.spec.?policyTypes.orValue([]) && 'Egress' in ${o}.spec.?policyTypes.orValue([]) && ` +
    `${o}.spec.?ingress.orValue([]).all(r, r.?from.orValue([]).all(p, !has(p.ipBlock))) && ${egressOk(o)})`
  );
};

export function networkReachValidations(): Validation[] {
  return [
    {
      expression: `!variables.onNetworkPolicies || (request.operation == 'DELETE' ? ${managedPolicy('oldObject')} : ${managedPolicy('object')})`,
      messageExpression:
        `'the operator may write only the NetworkPolicies of sandboxes (named <sandbox>-sandbox, labelled ` +
        `${LABELS.sandbox}=<sandbox> and ${LABELS.managedBy}=${MANAGED_BY}, owned by nothing but that Sandbox, over ` +
        `exactly its pods, egress ipBlocks only the internet minus the blocked ranges or single addresses on TCP ` +
        "ports or DNS); refused ' + request.operation + ' of networkpolicy ' + variables.pod",
      reason: 'Forbidden',
    },
  ];
}
