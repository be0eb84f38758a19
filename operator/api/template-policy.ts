/**
 * The pod-template policy (issue 15): a Sandbox's or a SandboxTemplate's `spec.podTemplate` is checked against
 * the Pod Security Standards at admission, on CREATE and UPDATE, so a namespace editor cannot have the operator
 * create a privileged, host-namespace or hostPath pod for them — nor have a warm pool do it (issue 28: the
 * operator creates pool and cold-claim Sandboxes itself, so their author's rights are the template's). The operator's own additions (the shell reaper) are
 * not in the template and are not judged here.
 *
 * The level, per Sandbox namespace:
 * 1. `privileged` if the namespace is listed in the parameters' `podTemplateExemptNamespaces`;
 * 2. else the namespace label `sandbox.agents.dev/pod-template-level` (an administrator's choice; tenants
 *    with `edit` cannot label namespaces);
 * 3. else the stricter of the parameters' `podTemplateLevel` (the chart's `podTemplatePolicy.level`,
 *    default baseline) and the namespace's `pod-security.kubernetes.io/enforce` level.
 * An unknown level refuses every Sandbox in the namespace (fail closed) with a message naming it. The
 * operator's reserved names and a namespace's pinned runtime classes apply at every level (template-placement.ts).
 */
import { GROUP, SANDBOX, SANDBOX_TEMPLATE, VERSION } from './names.ts';
import { policyBinding, type Validation, type Variable, validatingPolicy } from './admission.ts';
import { TEMPLATE_CHECKS, type TemplateCheck } from './template-checks.ts';
import {
  PLACEMENT_CHECKS,
  PLACEMENT_VARIABLES,
  reservedNameValidations,
  runtimeClassValidation,
} from './template-placement.ts';

export const TEMPLATE_POLICY_NAME = `sandbox-pod-template.${GROUP}`;
export const TEMPLATE_LEVEL_LABEL = `${GROUP}/pod-template-level`;
export const TEMPLATE_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export const DEFAULT_TEMPLATE_LEVEL = 'baseline';

const nsLabel = (key: string) => `namespaceObject.metadata.?labels[?'${key}']`;

/** The pod-template level of the request's namespace, as the list above says (the operator's bounds reuse it). */
export const LEVEL_VARIABLES: readonly Variable[] = [
  { name: 'configured', expression: `params.?data.?podTemplateLevel.orValue('${DEFAULT_TEMPLATE_LEVEL}')` },
  { name: 'enforced', expression: `${nsLabel('pod-security.kubernetes.io/enforce')}.orValue('privileged')` },
  {
    name: 'exempt',
    expression: "request.namespace in params.?data.?podTemplateExemptNamespaces.orValue('').split(',')",
  },
  {
    name: 'level',
    expression:
      `variables.exempt ? 'privileged' : ${nsLabel(TEMPLATE_LEVEL_LABEL)}.hasValue() ? ` +
      `${nsLabel(TEMPLATE_LEVEL_LABEL)}.value() : ` +
      "(variables.configured == 'restricted' || variables.enforced == 'restricted') ? 'restricted' : " +
      "(variables.configured == 'baseline' || variables.enforced == 'baseline') ? 'baseline' : variables.configured",
  },
];

/** Every check a pod template passes at its level: the Pod Security Standards, then placement. */
export const POD_CHECKS: readonly TemplateCheck[] = [...TEMPLATE_CHECKS, ...PLACEMENT_CHECKS];

const VARIABLES: readonly Variable[] = [
  { name: 'template', expression: 'object.spec.podTemplate.spec' },
  { name: 'annotations', expression: 'object.spec.podTemplate.?metadata.?annotations.orValue({})' },
  ...LEVEL_VARIABLES,
  ...PLACEMENT_VARIABLES,
  {
    name: 'podSecurity',
    expression: 'variables.template.?securityContext.orValue({})',
  },
];

export const LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;
const SUFFIX =
  "' at pod-template level ' + variables.level + ' (set by the admission parameter podTemplateLevel, the namespace " +
  `label ${TEMPLATE_LEVEL_LABEL} or its Pod Security enforce label)'`;

/** Where the checks run: the pod spec's path (for messages), and what else passes or refuses them. */
export type CheckTarget = {
  /** The pod spec's path in the object, e.g. `spec.podTemplate.spec` (a Sandbox) or `spec` (a pod). */
  readonly path: string;
  /** The metadata's path, e.g. `spec.podTemplate.metadata` or `metadata`. */
  readonly metadataPath: string;
  /** CEL that, when true, passes the check without looking (e.g. "not the operator's CREATE"). */
  readonly skip?: string;
  /** Per check, CEL over `c` for a container the check does not apply to (the injected sidecar). */
  readonly exempt?: (check: TemplateCheck, list: (typeof LISTS)[number]) => string | undefined;
  /** Prepended to every message. */
  readonly prefix?: string;
};

/** The CEL that names what fails: a field, or the offending containers' or volumes' fields. */
export function checkValidation(check: TemplateCheck, target: CheckTarget): Validation {
  const level =
    check.level === 'baseline' ? "variables.level == 'privileged'" : "variables.level != 'restricted'";
  const gate = target.skip === undefined ? level : `${target.skip} || ${level}`;
  const lead = target.prefix === undefined ? '' : `'${target.prefix}' + `;
  const { path } = target;
  if (check.on === 'pod') {
    return {
      expression: `${gate} || (${check.ok})`,
      messageExpression: `${lead}'${path}.${check.field} ${check.rule}' + ${SUFFIX}`,
      reason: 'Forbidden',
    };
  }
  if (check.on === 'annotation') {
    const annotations = 'variables.annotations';
    return {
      expression: `${gate} || ${annotations}.all(k, ${check.ok})`,
      messageExpression:
        `${lead}${annotations}.filter(k, !(${check.ok})).map(k, '${target.metadataPath}.annotations[' + k + ']')` +
        `.join(', ') + ' ${check.rule}' + ${SUFFIX}`,
      reason: 'Forbidden',
    };
  }
  if (check.on === 'volume') {
    const volumes = 'variables.template.?volumes.orValue([])';
    return {
      expression: `${gate} || ${volumes}.all(v, ${check.ok})`,
      messageExpression:
        `${lead}${volumes}.filter(v, !(${check.ok})).map(v, '${path}.volumes[' + string(v.name) + ']${check.field}')` +
        `.join(', ') + ' ${check.rule}' + ${SUFFIX}`,
      reason: 'Forbidden',
    };
  }
  const ok = (list: (typeof LISTS)[number]) => {
    const exempt = target.exempt?.(check, list);
    return exempt === undefined ? check.ok : `(${exempt}) || (${check.ok})`;
  };
  const each = (list: string, body: string) => `variables.template.?${list}.orValue([])${body}`;
  return {
    expression: `${gate} || (${LISTS.map((list) => each(list, `.all(c, ${ok(list)})`)).join(' && ')})`,
    messageExpression: `${lead}(${LISTS.map((list) =>
      each(
        list,
        `.filter(c, !(${ok(list)})).map(c, '${path}.${list}[' + string(c.name) + ']${check.field}')`,
      ),
    ).join(' + ')}).join(', ') + ' ${check.rule}' + ${SUFFIX}`,
    reason: 'Forbidden',
  };
}

/**
 * The template's author may create pods in the namespace (issue 26, #9): the operator creates the Sandbox's
 * pods from it (and a pool's or a cold claim's Sandboxes from a SandboxTemplate), so a persona allowed Sandboxes but not pods would otherwise get, through the operator, pods —
 * and with them the namespace's Secrets and ServiceAccounts, which any pod may mount. Kubernetes lets whoever
 * may create a pod mount those, so this one right is exactly what the author must already hold; nothing more
 * is reachable through the operator. Asked of every CREATE, and of an UPDATE only when it changes the
 * template: the operator's own metadata writes and a tenant's annotation never need it.
 */
const AUTHOR_MAY_CREATE_PODS: Validation = {
  // An UPDATE that keeps the template never gets here (the policy's match condition).
  expression: "authorizer.group('').resource('pods').namespace(request.namespace).check('create').allowed()",
  messageExpression:
    "'spec.podTemplate: ' + request.userInfo.username + ' may not create pods in namespace ' + request.namespace + " +
    "': the operator creates the pods of a Sandbox from its template, so its author needs that right (grant create on pods, as the built-in edit role does)'",
  reason: 'Forbidden',
};

export function templatePolicy(name: string = TEMPLATE_POLICY_NAME) {
  return validatingPolicy(name, {
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [GROUP],
          apiVersions: [VERSION],
          operations: ['CREATE', 'UPDATE'],
          // A SandboxTemplate is the same blueprint (spec.podTemplate at the same path): the operator creates a
          // warm pool's or a cold claim's Sandboxes from it itself, so its author is judged when it is written.
          resources: [SANDBOX.plural, SANDBOX_TEMPLATE.plural],
        },
      ],
    },
    // A template is judged when it is written. A Sandbox admitted before its namespace's checks tightened
    // (a level raised, a runtime class pinned, an upgrade adding a check) must still take the operator's
    // metadata writes — its finalizer's removal above all, or its deletion waits forever; the pods the
    // operator would build from it meet the same checks in the operator bounds (operator-reach.ts).
    matchConditions: [
      {
        name: 'template-written',
        expression: "request.operation == 'CREATE' || object.spec.podTemplate != oldObject.spec.podTemplate",
      },
    ],
    variables: VARIABLES,
    validations: [
      {
        expression: `variables.level in ${JSON.stringify(TEMPLATE_LEVELS).replaceAll('"', "'")}`,
        messageExpression:
          `'pod-template level ' + variables.level + ' is not one of ${TEMPLATE_LEVELS.join(', ')}: fix the admission ` +
          `parameter podTemplateLevel or the namespace label ${TEMPLATE_LEVEL_LABEL}'`,
        reason: 'Invalid',
      },
      ...reservedNameValidations('spec.podTemplate.spec'),
      ...POD_CHECKS.map((check) =>
        checkValidation(check, { path: 'spec.podTemplate.spec', metadataPath: 'spec.podTemplate.metadata' }),
      ),
      runtimeClassValidation('spec.podTemplate.spec'),
      AUTHOR_MAY_CREATE_PODS,
    ],
  });
}

export const templatePolicyBinding = (
  paramNamespace: string,
  policyName: string = TEMPLATE_POLICY_NAME,
  paramsName?: string,
) => policyBinding(policyName, paramNamespace, paramsName);
