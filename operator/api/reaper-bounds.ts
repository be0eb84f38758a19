/**
 * What the operator's identity may put into a pod's shell reaper (issue 26 #1): rules of the operator-bounds
 * policy (operator-bounds.ts, through operator-reach.ts), evaluated only for the operator users' pod CREATE.
 *
 * The reaper is the one container the bounds spare a check: in its Privileged mode it is root with SYS_PTRACE.
 * It is spared only where that mode may run — a namespace an administrator labelled both
 * `PRIVILEGED_REAPER_LABEL=allowed` and PodSecurity `enforce=privileged`, the two labels the operator reads
 * before it builds the mode (operator/sidecar/injection/mode.ts); elsewhere it meets the namespace's checks as
 * every container does, which its SameUser mode passes. And it is held to its shape (reaper-shape.ts), so a
 * leaked token cannot run code of its own in it: the injected command, image (the admission parameter
 * `reaperImages`, when set), startup probe, environment and mounts, nothing more.
 */
import { REAPER_CONTAINER, REAPER_VOLUMES } from './names.ts';
import type { Validation, Variable } from './admission.ts';
import {
  POD_SECURITY_ENFORCE_LABEL,
  PRIVILEGED_REAPER_ALLOWED,
  PRIVILEGED_REAPER_LABEL,
  REAPER_COMMAND,
  REAPER_ENV_PREFIX,
  REAPER_MOUNT_PATHS,
  REAPER_PROBE_COMMAND,
} from './reaper-shape.ts';
import { BASELINE_CAPABILITIES, type TemplateCheck } from './template-checks.ts';

/** The capabilities the reaper's privileged mode adds beyond baseline's (DAC_OVERRIDE is baseline's). */
export const REAPER_EXTRA_CAPABILITIES = ['SYS_PTRACE'] as const;

const quoted = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;
/** A CEL list of arbitrary strings (double-quoted, escaped as JSON: the probe's script holds single quotes). */
const literal = (values: readonly string[]) => `[${values.map((v) => JSON.stringify(v)).join(', ')}]`;
const nsLabel = (key: string) => `namespaceObject.metadata.?labels[?'${key}'].orValue('')`;
const CHECKED = 'the operator may create only pods that pass the pod-template checks of their namespace: ';
const REAPER = `the shell reaper (spec.initContainers[${REAPER_CONTAINER}])`;
/** Ends a message's open string literal. */
const REFUSED = "; refused pod ' + variables.pod";

/** A comma-separated admission parameter, as a list (empty when unset). */
const listParam = (name: string) => `params.?data.?${name}.orValue('').split(',').filter(i, i != '')`;
/**
 * What the kubelet sets in every container anyway: a cluster whose pods reach the API server another way
 * (the local control plane's loopback policy) writes them into the spec.
 */
const KUBELET_ENV = ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'];

export const REAPER_VARIABLES: readonly Variable[] = [
  {
    name: 'reaperRootAllowed',
    expression:
      `${nsLabel(POD_SECURITY_ENFORCE_LABEL)} == 'privileged' && ` +
      `${nsLabel(PRIVILEGED_REAPER_LABEL)} == '${PRIVILEGED_REAPER_ALLOWED}'`,
  },
  { name: 'reaperImages', expression: listParam('reaperImages') },
  {
    name: 'reaperEnv',
    expression: `${quoted(KUBELET_ENV)} + ${listParam('reaperExtraEnv')}`,
  },
  { name: 'reaperMountPaths', expression: listParam('reaperExtraMountPaths') },
];

/**
 * The reaper is spared what its privileged mode cannot pass — root, and capabilities beyond baseline — where an
 * administrator opted the namespace in to that mode, and nowhere else.
 */
export const reaperSpared = (check: TemplateCheck, list: string): string | undefined =>
  list === 'initContainers' &&
  (check.level === 'restricted' || check.field === '.securityContext.capabilities.add')
    ? `c.name == '${REAPER_CONTAINER}' && variables.reaperRootAllowed`
    : undefined;

/** A validation of the reaper container `c` of a pod the operator creates. */
const onReaper = (ok: string, message: string): Validation => ({
  expression:
    '!variables.podCreate || variables.template.?initContainers.orValue([])' +
    `.all(c, c.name != '${REAPER_CONTAINER}' || (${ok}))`,
  messageExpression: `'${CHECKED}${REAPER} ${message}${REFUSED}`,
  reason: 'Forbidden',
});

const reaperCapabilities = [...BASELINE_CAPABILITIES, ...REAPER_EXTRA_CAPABILITIES];
const mounts = `{${Object.entries(REAPER_MOUNT_PATHS)
  .map(([name, path]) => `'${name}': '${path}'`)
  .join(', ')}}`;
const EMPTY_DIRS = [REAPER_VOLUMES.socket, REAPER_VOLUMES.output, REAPER_VOLUMES.state, REAPER_VOLUMES.tmp];

/**
 * The agents' mounts of the reaper's volumes: its token, journal and scratch space for the reaper alone, its
 * socket read-only for everyone else (an agent that could write there could replace the socket).
 */
const REAPER_ONLY = [REAPER_VOLUMES.token, REAPER_VOLUMES.state, REAPER_VOLUMES.tmp];
const agentMountOk =
  `c.?volumeMounts.orValue([]).all(m, !(m.name in ${quoted(REAPER_ONLY)}) && ` +
  `(m.name != '${REAPER_VOLUMES.socket}' || m.?readOnly.orValue(false)))`;
const AGENT_MOUNTS: Validation = {
  expression:
    '!variables.podCreate || ' +
    ['containers', 'initContainers', 'ephemeralContainers']
      .map(
        (list) =>
          `variables.template.?${list}.orValue([]).all(c, ` +
          `${list === 'initContainers' ? `c.name == '${REAPER_CONTAINER}' || ` : ''}${agentMountOk})`,
      )
      .join(' && '),
  messageExpression:
    `'${CHECKED}only the shell reaper mounts ${REAPER_ONLY.join(', ')}, and others mount ` +
    `${REAPER_VOLUMES.socket} read-only; refused pod ' + variables.pod`,
  reason: 'Forbidden',
};

export function reaperValidations(): Validation[] {
  return [
    AGENT_MOUNTS,
    {
      expression:
        "!variables.podCreate || variables.level == 'privileged' || " +
        `variables.template.?initContainers.orValue([]).all(c, c.name != '${REAPER_CONTAINER}' || ` +
        `c.?securityContext.?capabilities.?add.orValue([]).all(a, a in ${quoted(reaperCapabilities)}))`,
      messageExpression:
        `'${CHECKED}${REAPER} may add only ${reaperCapabilities.join(', ')} at pod-template level ' + ` +
        `variables.level + '${REFUSED}`,
      reason: 'Forbidden',
    },
    onReaper(
      `c.?command.orValue([]) == ${literal(REAPER_COMMAND)} && !has(c.args) && !has(c.workingDir)`,
      `runs only the command ${REAPER_COMMAND.join(' ')}, with no args and no workingDir`,
    ),
    onReaper(
      "size(variables.reaperImages) == 0 || c.?image.orValue('') in variables.reaperImages",
      "runs only an image the admission parameter reaperImages lists (' + variables.reaperImages.join(', ') + ')",
    ),
    onReaper(
      `c.?startupProbe.?exec.?command.orValue([]) == ${literal(REAPER_PROBE_COMMAND)} && ` +
        '!has(c.livenessProbe) && !has(c.readinessProbe) && !has(c.lifecycle)',
      'has only the startup probe the operator injects (node -e, connecting to its socket), and no ' +
        'livenessProbe, readinessProbe or lifecycle hook',
    ),
    onReaper(
      '!has(c.envFrom) && c.?env.orValue([]).all(e, ' +
        `(e.name.startsWith('${REAPER_ENV_PREFIX}') || e.name in variables.reaperEnv) && ` +
        '(!has(e.valueFrom) || has(e.valueFrom.fieldRef)))',
      `has only variables named ${REAPER_ENV_PREFIX}*, or one of ' + variables.reaperEnv.join(', ') + ' ` +
        '(the admission parameter reaperExtraEnv adds to these), each a value or a fieldRef, and no envFrom',
    ),
    onReaper(
      '!has(c.volumeDevices) && c.?volumeMounts.orValue([]).all(m, ' +
        `((m.name in ${mounts} && ${mounts}[m.name] == m.mountPath) || ` +
        `(!(m.name in ${mounts}) && !(m.mountPath in ${quoted(Object.values(REAPER_MOUNT_PATHS))}) && ` +
        'm.mountPath in variables.reaperMountPaths)) && ' +
        '!has(m.subPath) && !has(m.subPathExpr))',
      `mounts only its own volumes at their paths (${Object.entries(REAPER_MOUNT_PATHS)
        .map(([name, path]) => `${name} at ${path}`)
        .join(', ')}), whole, and no device; other volumes only at a path the admission parameter ` +
        "reaperExtraMountPaths lists (' + variables.reaperMountPaths.join(', ') + ')",
    ),
    {
      expression:
        '!variables.podCreate || variables.template.?volumes.orValue([]).all(v, ' +
        `(!(v.name in ${quoted(EMPTY_DIRS)}) || has(v.emptyDir)) && ` +
        `(v.name != '${REAPER_VOLUMES.token}' || has(v.projected)))`,
      messageExpression:
        `'${CHECKED}the shell reaper’s volumes ${EMPTY_DIRS.join(', ')} are emptyDirs, and ` +
        `${REAPER_VOLUMES.token} a projected volume${REFUSED}`,
      reason: 'Forbidden',
    },
  ];
}
