/**
 * A SandboxClaim's status, pure: `Bound` says whether a sandbox is bound and, if not, what stops it (a reason
 * naming the field to fix); `Ready` follows the bound Sandbox's own Ready condition. `lastTransitionTime`
 * moves only when a condition's status changes, as metav1.Condition does.
 */
import { rfc3339 } from '../conditions.ts';
import type { BindingSandbox, ClaimCondition, ClaimStatus, LaunchType } from './records.ts';

/** Why a claim is not bound (yet). */
export type UnboundReason =
  | 'Binding'
  | 'WarmPoolNotFound'
  | 'TemplateNotFound'
  | 'TemplateUnusable'
  | 'ReferenceConflict'
  | 'SpecInvalid';

export type Unbound = { readonly reason: UnboundReason; readonly message: string };

export type Binding = {
  readonly sandbox: string;
  readonly reference: string;
  readonly launchType: LaunchType;
  readonly boundAt: string;
};

type Update = Omit<ClaimCondition, 'lastTransitionTime' | 'observedGeneration'>;

export function withCondition(
  conditions: readonly ClaimCondition[] | undefined,
  update: Update,
  now: Date,
  generation: number,
): ClaimCondition[] {
  const existing = conditions?.find((c) => c.type === update.type);
  const next: ClaimCondition = {
    ...update,
    lastTransitionTime:
      existing && existing.status === update.status ? existing.lastTransitionTime : rfc3339(now),
    observedGeneration: generation,
  };
  return [...(conditions ?? []).filter((c) => c.type !== update.type), next].sort(
    (a, b) => rank(a.type) - rank(b.type),
  );
}

const rank = (type: string) => (type === 'Bound' ? 0 : type === 'Ready' ? 1 : 2);

/** Ready of a bound claim: its sandbox's Ready, or why there is none to follow. */
export function readyOf(sandboxName: string, sandbox: BindingSandbox | undefined): Update {
  if (sandbox === undefined)
    return {
      type: 'Ready',
      status: 'False',
      reason: 'SandboxGone',
      message: `the bound sandbox ${sandboxName} does not exist any more`,
    };
  if (sandbox.deleting)
    return {
      type: 'Ready',
      status: 'False',
      reason: 'SandboxDeleting',
      message: `the bound sandbox ${sandboxName} is being deleted`,
    };
  if (sandbox.ready.status === 'True')
    return {
      type: 'Ready',
      status: 'True',
      reason: 'SandboxReady',
      message: `sandbox ${sandboxName} is Ready`,
    };
  const why = sandbox.ready.reason ? ` (${sandbox.ready.reason})` : '';
  return {
    type: 'Ready',
    status: 'False',
    reason: 'SandboxNotReady',
    message: `waiting for sandbox ${sandboxName} to be Ready${why}`,
  };
}

export function boundStatus(
  current: ClaimStatus,
  binding: Binding,
  sandbox: BindingSandbox | undefined,
  now: Date,
  generation: number,
): ClaimStatus {
  const bound = withCondition(
    current.conditions,
    {
      type: 'Bound',
      status: 'True',
      reason: binding.launchType === 'Warm' ? 'WarmSandboxBound' : 'ColdSandboxBound',
      message:
        binding.launchType === 'Warm'
          ? `bound ready pool sandbox ${binding.sandbox}; session reference ${binding.reference}`
          : `bound sandbox ${binding.sandbox}, created from the template; session reference ${binding.reference}`,
    },
    now,
    generation,
  );
  return {
    observedGeneration: generation,
    ...binding,
    conditions: withCondition(bound, readyOf(binding.sandbox, sandbox), now, generation),
  };
}

export function unboundStatus(
  current: ClaimStatus,
  unbound: Unbound,
  now: Date,
  generation: number,
): ClaimStatus {
  const bound = withCondition(
    current.conditions,
    { type: 'Bound', status: 'False', ...unbound },
    now,
    generation,
  );
  return {
    observedGeneration: generation,
    conditions: withCondition(
      bound,
      { type: 'Ready', status: 'False', reason: 'NotBound', message: 'no sandbox is bound yet' },
      now,
      generation,
    ),
  };
}

/** True when `after` says Ready and `before` did not: the moment the claim → Ready latency ends. */
export function becameReady(before: ClaimStatus, after: ClaimStatus): boolean {
  const ready = (status: ClaimStatus) =>
    status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  return ready(after) && !ready(before);
}

/** Whether the status written would change anything (a no-op write is skipped). */
export function sameStatus(a: ClaimStatus, b: ClaimStatus): boolean {
  return JSON.stringify(normal(a)) === JSON.stringify(normal(b));
}

const normal = (status: ClaimStatus) => ({
  observedGeneration: status.observedGeneration,
  sandbox: status.sandbox,
  reference: status.reference,
  launchType: status.launchType,
  boundAt: status.boundAt,
  conditions: (status.conditions ?? []).map((c) => [
    c.type,
    c.status,
    c.reason,
    c.message,
    c.lastTransitionTime,
    c.observedGeneration,
  ]),
});
