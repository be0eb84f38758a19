/**
 * The eviction guard, re-established on every reconcile of a live or deleting sandbox: the eviction API skips
 * DELETE admission, so the PodDisruptionBudget is the only thing between a drain and a shared sandbox's pods,
 * and a user, a foreground cascade or a GitOps replace can remove or change it at any time.
 */
import type { Logger } from 'pino';
import type { Sandbox } from '../api/objects.ts';
import type { ReconcilerContext } from './context.ts';
import { KubeRequestError } from '../kube/errors.ts';
import { keyOf } from './cache/store.ts';

export async function keepEvictionGuard(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
  log: Logger,
): Promise<void> {
  const { namespace, name } = sandbox.metadata;
  const seen = ctx.store.budget(keyOf(namespace, name));
  if (seen?.guards === true && !seen.deleting) return;
  let result: Awaited<ReturnType<typeof ctx.ports.guards.ensureDisruptionBudget>>;
  try {
    result = await ctx.ports.guards.ensureDisruptionBudget(sandbox);
  } catch (error) {
    // A terminating namespace refuses every create; its pods stay protected by admission, and the decision
    // (which the namespace's deletion is waiting for) must not fail on a guard that can no longer exist.
    if (error instanceof KubeRequestError && error.namespaceTerminating) {
      log.info(
        { budget: `${name}-sandbox` },
        'namespace is terminating; the eviction guard cannot be re-created',
      );
      return;
    }
    throw error;
  }
  if (seen === undefined && result === 'Created') {
    log.info({ budget: `${name}-sandbox` }, 'eviction guard (PodDisruptionBudget) created');
  } else if (result !== 'Unchanged') {
    // It was there before and is not as it must be: someone removed or changed it.
    log.warn(
      { budget: `${name}-sandbox`, result, seen: seen ?? 'missing' },
      'eviction guard was removed or changed; re-established',
    );
  }
}
