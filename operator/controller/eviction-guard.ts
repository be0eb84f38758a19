/**
 * The eviction guard, re-established on every reconcile of a live or deleting sandbox: the eviction API skips
 * DELETE admission, so the PodDisruptionBudget is the only thing between a drain and a shared sandbox's pods,
 * and a user, a foreground cascade or a GitOps replace can remove or change it at any time.
 *
 * A guard can also be refused for good: a platform policy that forbids `maxUnavailable: 0` budgets (a common
 * rule) answers 403 to every attempt. That is a misconfiguration to say on the Sandbox, not a failure to retry:
 * the live turn then creates no pod that would run unguarded, and a deletion goes on to its decision (an
 * exclusive sandbox's release needs no guard; a shared one stays blocked, its refusal said).
 */
import type { Logger } from 'pino';
import type { SandboxState } from '../api/objects.ts';
import { LABELS, MANAGED_BY } from '../api/names.ts';
import { controllerErrorOf, MisconfigurationError, type Misconfiguration } from '../runtime/error-policy.ts';
import type { ReconcilerContext } from './context.ts';
import { KubeRequestError } from '../kube/errors.ts';
import { keyOf } from './cache/store.ts';
import { disruptionBudgetName } from './cache/budget-summary.ts';

export type GuardOutcome =
  /** The guard stands, or cannot exist any more because its namespace is terminating. */
  | { readonly kind: 'Kept' }
  /** A setting refuses it (an admission policy, RBAC): only a person can change that. */
  | { readonly kind: 'Refused'; readonly error: MisconfigurationError };

export async function keepEvictionGuard(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  log: Logger,
): Promise<GuardOutcome> {
  const { namespace, name } = sandbox.metadata;
  const budget = disruptionBudgetName(name);
  const seen = ctx.store.budget(keyOf(namespace, name));
  if (seen?.guards === true && !seen.deleting) return { kind: 'Kept' };
  let result: Awaited<ReturnType<typeof ctx.ports.guards.ensureDisruptionBudget>>;
  try {
    result = await ctx.ports.guards.ensureDisruptionBudget(sandbox);
  } catch (error) {
    // A terminating namespace refuses every create; its pods stay protected by admission, and the decision
    // (which the namespace's deletion is waiting for) must not fail on a guard that can no longer exist.
    if (error instanceof KubeRequestError && error.namespaceTerminating) {
      log.info({ budget }, 'namespace is terminating; the eviction guard cannot be re-created');
      return { kind: 'Kept' };
    }
    const classified = controllerErrorOf(error);
    if (classified.kind !== 'Misconfigured') throw error;
    return { kind: 'Refused', error: guardRefused(budget, classified.misconfiguration, error) };
  }
  if (seen === undefined && result === 'Created') {
    log.info({ budget }, 'eviction guard (PodDisruptionBudget) created');
  } else if (result !== 'Unchanged') {
    // It was there before and is not as it must be: someone removed or changed it.
    log.warn(
      { budget, result, seen: seen ?? 'missing' },
      'eviction guard was removed or changed; re-established',
    );
  }
  return { kind: 'Kept' };
}

/** The refusal in the guard's words: which budget, what refused it, and what a platform team changes. */
function guardRefused(budget: string, refusal: Misconfiguration, cause: unknown): MisconfigurationError {
  const exempt =
    refusal.reason === 'AdmissionRefused'
      ? `exempt the operator's budgets (label ${LABELS.managedBy}=${MANAGED_BY}) from the admission policy that refuses them`
      : refusal.fix;
  return new MisconfigurationError(
    {
      reason: 'EvictionGuardRefused',
      refused: `eviction guard PodDisruptionBudget ${budget} (maxUnavailable: 0) refused: ${refusal.refused}`,
      fix: `${exempt}; until then the sandbox's pods are not created, and its deletion releases it only when exclusive`,
    },
    { cause },
  );
}
