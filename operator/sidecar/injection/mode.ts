/**
 * Which privilege mode the sidecar runs in (docs/sidecar.md "Privilege modes"), from what the pod template
 * pins and the namespace's PodSecurity `enforce` level. Pure.
 *
 * - `SameUser` needs the agent's user and group: every agent container must run as one non-root UID and
 *   GID (the ptrace access check behind /proc/<pid>/environ compares both). It is admitted at every level.
 * - `Privileged` (root with KILL, SYS_PTRACE, DAC_OVERRIDE, CHOWN) needs two things an administrator
 *   says on the namespace (issue 26 #2): the opt-in label `PRIVILEGED_REAPER_LABEL=allowed` and the
 *   `privileged` level. Tenants with `edit` cannot label namespaces, so neither is theirs to give. An unknown
 *   level (unlabelled: the cluster's default, which the operator cannot read) counts as `restricted`.
 *   Refused here, with the fix, rather than by PodSecurity admission at pod creation.
 * - `Auto` takes `SameUser` when the template pins the user, and is refused otherwise: it never chooses
 *   root, whatever the namespace allows — root is asked for by name or not at all.
 */
import {
  POD_SECURITY_ENFORCE_LABEL,
  PRIVILEGED_REAPER_ALLOWED,
  PRIVILEGED_REAPER_LABEL,
} from '../../api/reaper-shape.ts';
import { PRIVILEGED_CAPABILITIES, type ReaperMode } from './injection.ts';

export const REAPER_MODES = ['Auto', 'SameUser', 'Privileged'] as const;
export type RequestedMode = (typeof REAPER_MODES)[number];
export const POD_SECURITY_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

// The administrator's two namespace labels are the operator bounds' too (api/reaper-shape.ts).
export { POD_SECURITY_ENFORCE_LABEL, PRIVILEGED_REAPER_ALLOWED, PRIVILEGED_REAPER_LABEL };

/**
 * The level a namespace's labels make PodSecurity admission enforce: undefined when unlabelled (the cluster's
 * default applies, which the operator cannot see); `restricted` for a value admission cannot parse, as
 * admission itself evaluates it (it fails closed to restricted).
 */
export function podSecurityLevelOf(
  labels: Readonly<Record<string, string>> | undefined,
): PodSecurityLevel | undefined {
  const value = labels?.[POD_SECURITY_ENFORCE_LABEL];
  if (value === undefined) return undefined;
  return (POD_SECURITY_LEVELS as readonly string[]).includes(value)
    ? (value as PodSecurityLevel)
    : 'restricted';
}

export interface AgentUser {
  readonly uid: number;
  readonly gid: number;
}

interface SecurityContextLike {
  readonly runAsUser?: number;
  readonly runAsGroup?: number;
}
interface ContainerLike {
  readonly securityContext?: SecurityContextLike;
}
export interface PodSpecLike {
  readonly securityContext?: SecurityContextLike;
  readonly containers: readonly ContainerLike[];
  readonly initContainers?: readonly ContainerLike[];
}

/** The one non-root user and group every container of the template runs as, or undefined. */
export function agentUserOf(spec: PodSpecLike): AgentUser | undefined {
  const users = [...spec.containers, ...(spec.initContainers ?? [])].map((c) => ({
    uid: c.securityContext?.runAsUser ?? spec.securityContext?.runAsUser,
    gid: c.securityContext?.runAsGroup ?? spec.securityContext?.runAsGroup,
  }));
  const first = users[0];
  if (first?.uid === undefined || first.gid === undefined || first.uid === 0) return undefined;
  if (!users.every((u) => u.uid === first.uid && u.gid === first.gid)) return undefined;
  return { uid: first.uid, gid: first.gid };
}

export type ModeChoice =
  { readonly ok: true; readonly mode: ReaperMode } | { readonly ok: false; readonly message: string };

export interface ModeInput {
  readonly requested: RequestedMode;
  readonly agentUser: AgentUser | undefined;
  /** The namespace's `pod-security.kubernetes.io/enforce` level; undefined when unknown or unset. */
  readonly level: PodSecurityLevel | undefined;
  /** Whether an administrator labelled the namespace `PRIVILEGED_REAPER_LABEL=allowed`. */
  readonly privilegedAllowed: boolean;
  readonly namespace: string;
}

const PIN_USER =
  'set securityContext.runAsUser and runAsGroup (one non-root user for every container) in spec.podTemplate';

/** What an administrator does to a namespace to allow the Privileged mode there. */
const OPT_IN =
  `label it ${PRIVILEGED_REAPER_LABEL}=${PRIVILEGED_REAPER_ALLOWED} and ` +
  `${POD_SECURITY_ENFORCE_LABEL}=privileged`;

export function chooseReaperMode(input: ModeInput): ModeChoice {
  const { requested, agentUser, namespace } = input;
  if (requested !== 'Privileged' && agentUser !== undefined)
    return { ok: true, mode: { kind: 'SameUser', uid: agentUser.uid, gid: agentUser.gid } };
  if (requested === 'SameUser') {
    return {
      ok: false,
      message: `spec.shellReaper.mode SameUser runs the sidecar as the agent's user: ${PIN_USER}`,
    };
  }
  if (requested === 'Auto') {
    return {
      ok: false,
      message:
        `spec.shellReaper.mode Auto never runs the sidecar as root: ${PIN_USER} so it runs as that user ` +
        `(SameUser), or, for agents that change user, ask for mode Privileged in a namespace an administrator ` +
        `opted in (${OPT_IN})`,
    };
  }
  // An unlabelled namespace's level is the cluster's default, which the operator cannot read: assume the worst.
  const level = input.level ?? 'restricted';
  if (level !== 'privileged') {
    return {
      ok: false,
      message:
        `namespace ${namespace} enforces PodSecurity ${level} (${input.level === undefined ? 'unlabelled' : 'labelled'}), ` +
        `which refuses the shell reaper's Privileged mode (root with ${PRIVILEGED_CAPABILITIES.join(', ')}): ` +
        `${PIN_USER} so the sidecar runs as that user (SameUser, admitted by restricted), or have an administrator ` +
        `opt the namespace in (${OPT_IN})`,
    };
  }
  if (!input.privilegedAllowed) {
    return {
      ok: false,
      message:
        `namespace ${namespace} has not been opted in to the shell reaper's Privileged mode (root with ` +
        `${PRIVILEGED_CAPABILITIES.join(', ')}): ${PIN_USER} so the sidecar runs as that user (SameUser), or have an ` +
        `administrator label the namespace ${PRIVILEGED_REAPER_LABEL}=${PRIVILEGED_REAPER_ALLOWED}`,
    };
  }
  return {
    ok: true,
    mode: agentUser === undefined ? { kind: 'Privileged' } : { kind: 'Privileged', agent: agentUser },
  };
}
