/**
 * What a pod template may not ask for beyond the Pod Security Standards (issue 26, item 3): where its pods run
 * and what the operator's injection owns. Checked with the pod-template checks (template-policy.ts) and, on
 * the pods the operator creates, by its bounds (operator-reach.ts).
 *
 * - Placement, at baseline and above: `nodeName` bypasses the scheduler (taints, affinities, the node's
 *   capacity), so only nodes an administrator lists in the admission parameter `podTemplateNodeNames` may be
 *   named; tolerating the control-plane taints (or every taint) puts agent code beside the API server's
 *   secrets; a `system-` priority class preempts the cluster's own pods; a `gitRepo` volume runs git on the
 *   node as root (deprecated upstream).
 * - The operator's names, at every level: its volumes and the shell reaper's container name
 *   (names.ts). Declared by a template they collide with the injection; mounted by name they hand the agent
 *   the reaper's token and journal, or let it replace the socket.
 * - Runtime classes an administrator pins in the namespace annotation `sandbox.agents.dev/runtime-classes`
 *   (e.g. `gvisor,kata`), at every level: the template must name one of them. Refused, not defaulted: the
 *   operator builds pods from the template as written, and a tenant sees why in the refusal.
 */
import type { Validation, Variable } from './admission.ts';
import { REAPER_CONTAINER, REAPER_VOLUMES, RUNTIME_CLASSES_ANNOTATION } from './names.ts';
import type { TemplateCheck } from './template-checks.ts';

const quoted = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;
const CONTROL_PLANE_TAINTS = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'];
export const RESERVED_VOLUMES: readonly string[] = Object.values(REAPER_VOLUMES);
/** The admission parameter listing the nodes a template may name (empty: none). */
export const NODE_NAMES_PARAM = 'podTemplateNodeNames';

const csv = (expression: string) => `${expression}.split(',').map(s, s.trim()).filter(s, s != '')`;

/** Read by the checks below; `annotations` is the target's own (a template's or a pod's metadata). */
export const PLACEMENT_VARIABLES: readonly Variable[] = [
  { name: 'allowedNodes', expression: csv(`params.?data.?${NODE_NAMES_PARAM}.orValue('')`) },
  {
    name: 'runtimeClasses',
    expression: csv(`namespaceObject.metadata.?annotations[?'${RUNTIME_CLASSES_ANNOTATION}'].orValue('')`),
  },
];

export const PLACEMENT_CHECKS: readonly TemplateCheck[] = [
  {
    level: 'baseline',
    on: 'pod',
    field: 'nodeName',
    rule: `must be unset (the scheduler places sandbox pods) or a node listed in the admission parameter ${NODE_NAMES_PARAM}`,
    ok: "variables.template.?nodeName.orValue('') == '' || variables.template.nodeName in variables.allowedNodes",
  },
  {
    level: 'baseline',
    on: 'pod',
    field: 'tolerations',
    rule: `may not tolerate the control-plane taints (${CONTROL_PLANE_TAINTS.join(', ')}) nor every taint (operator Exists without a key)`,
    ok:
      `variables.template.?tolerations.orValue([]).all(t, !(t.?key.orValue('') in ${quoted(CONTROL_PLANE_TAINTS)}) && ` +
      "!(t.?key.orValue('') == '' && t.?operator.orValue('') == 'Exists'))",
  },
  {
    level: 'baseline',
    on: 'pod',
    field: 'priorityClassName',
    rule: 'may not name a system priority class (system-cluster-critical, system-node-critical, system-*)',
    ok: "!variables.template.?priorityClassName.orValue('').startsWith('system-')",
  },
  {
    level: 'baseline',
    on: 'volume',
    field: '.gitRepo',
    rule: 'is not allowed (gitRepo volumes run git on the node as root; clone in an init container)',
    ok: '!has(v.gitRepo)',
  },
];

const LISTS = ['containers', 'initContainers', 'ephemeralContainers'] as const;
const each = (list: string) => `variables.template.?${list}.orValue([])`;
const RESERVED =
  `a name reserved for the operator’s shell reaper (its container ${REAPER_CONTAINER}, its volumes ` +
  `${RESERVED_VOLUMES.join(', ')}): rename it`;

/** The operator's names in a template: its volumes, mounts of them, its container. `path` is the pod spec's. */
export function reservedNameValidations(path: string): Validation[] {
  const volume = `v.name in ${quoted(RESERVED_VOLUMES)}`;
  const mount = `m.name in ${quoted(RESERVED_VOLUMES)}`;
  const mounts = LISTS.map(
    (list) =>
      `${each(list)}.filter(c, c.?volumeMounts.orValue([]).exists(m, ${mount})).map(c, c.volumeMounts` +
      `.filter(m, ${mount}).map(m, '${path}.${list}[' + string(c.name) + '].volumeMounts[' + string(m.name) + ']')` +
      ".join(', '))",
  );
  return [
    {
      expression: `!${each('volumes')}.exists(v, ${volume})`,
      messageExpression:
        `${each('volumes')}.filter(v, ${volume}).map(v, '${path}.volumes[' + string(v.name) + ']').join(', ') + ` +
        `' uses ${RESERVED}'`,
      reason: 'Forbidden',
    },
    {
      expression: LISTS.map((list) => `!${each(list)}.exists(c, c.name == '${REAPER_CONTAINER}')`).join(
        ' && ',
      ),
      messageExpression:
        `(${LISTS.map((list) => `${each(list)}.filter(c, c.name == '${REAPER_CONTAINER}').map(c, '${path}.${list}[' + string(c.name) + ']')`).join(' + ')})` +
        `.join(', ') + ' uses ${RESERVED}'`,
      reason: 'Forbidden',
    },
    {
      expression: LISTS.map(
        (list) => `!${each(list)}.exists(c, c.?volumeMounts.orValue([]).exists(m, ${mount}))`,
      ).join(' && '),
      messageExpression: `(${mounts.join(' + ')}).join(', ') + ' mounts ${RESERVED}'`,
      reason: 'Forbidden',
    },
  ];
}

/** The namespace's pinned runtime classes, if its administrator set any. `skip` as in CheckTarget. */
export function runtimeClassValidation(path: string, skip?: string, prefix = ''): Validation {
  const given = "variables.template.?runtimeClassName.orValue('')";
  return {
    expression:
      `${skip === undefined ? '' : `${skip} || `}size(variables.runtimeClasses) == 0 || ` +
      `${given} in variables.runtimeClasses`,
    messageExpression:
      `'${prefix}${path}.runtimeClassName must be one of ' + variables.runtimeClasses.join(', ') + ' in namespace ' + ` +
      `request.namespace + ' (its annotation ${RUNTIME_CLASSES_ANNOTATION}, set by an administrator); it is ' + ` +
      `(${given} == '' ? 'unset' : ${given})`,
    reason: 'Forbidden',
  };
}
