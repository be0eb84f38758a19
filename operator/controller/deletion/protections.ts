/**
 * What protects the pods a deletion holds, kept while they stand and removed once they are gone: the eviction
 * guard (a drain must not evict them) and the NetworkPolicy (they must not run unisolated). Neither has an
 * owner, so no cascade takes them; a user still can, and each is put back on every turn that holds pods.
 * A protection refused for good does not hold the decision: an exclusive sandbox is released without it, a
 * blocked one says it (turn.ts, 'blocked').
 */
import type { Logger } from 'pino';
import { networkPolicyName } from '../../api/network-policy.ts';
import type { SandboxState } from '../../api/objects.ts';
import type { ReconcilerContext } from '../context.ts';
import { keepEvictionGuard } from '../eviction-guard.ts';
import { keepNetworkIsolation } from '../network-isolation.ts';
import type { DeletionFacts, DeletionStep } from './steps.ts';

type ProtectionStep = Extract<
  DeletionStep,
  { kind: 'keep-guard' | 'keep-isolation' | 'remove-guard' | 'remove-isolation' }
>;

export const isProtectionStep = (step: DeletionStep): step is ProtectionStep =>
  step.kind === 'keep-guard' ||
  step.kind === 'keep-isolation' ||
  step.kind === 'remove-guard' ||
  step.kind === 'remove-isolation';

export async function performProtectionStep(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  step: ProtectionStep,
  facts: DeletionFacts,
  log: Logger,
): Promise<DeletionFacts> {
  const { namespace, name } = sandbox.metadata;
  switch (step.kind) {
    case 'keep-guard': {
      const outcome = await keepEvictionGuard(ctx, sandbox, log);
      ctx.failpoint(step.kind);
      if (outcome.kind === 'Kept') return { ...facts, guardKept: true };
      log.info({ refused: outcome.error.message }, 'eviction guard refused; the decision goes on without it');
      return { ...facts, guardKept: true, guardRefused: outcome.error };
    }
    case 'keep-isolation': {
      // Without the port (tests of other rules) there is no policy to keep.
      const outcome = ctx.ports.networkPolicies
        ? await keepNetworkIsolation(ctx, sandbox, log)
        : ({ kind: 'Kept' } as const);
      ctx.failpoint(step.kind);
      if (outcome.kind === 'Kept') return { ...facts, isolationKept: true };
      log.info({ refused: outcome.error.message }, 'NetworkPolicy refused; the decision goes on without it');
      return { ...facts, isolationKept: true, isolationRefused: outcome.error };
    }
    case 'remove-guard':
      await ctx.ports.guards.removeDisruptionBudget(namespace, step.budget.name, step.budget.uid);
      ctx.failpoint(step.kind);
      return { ...facts, guardRemoved: true };
    case 'remove-isolation': {
      const uid = sandbox.metadata.uid ?? '';
      const removed = await ctx.ports.networkPolicies?.removeOwned({ namespace, name, uid });
      ctx.failpoint(step.kind);
      if (removed === 'NotOurs')
        log.warn(
          { policy: networkPolicyName(name) },
          'a NetworkPolicy under the sandbox’s policy name is not the operator’s; left in place',
        );
      return { ...facts, isolationRemoved: true };
    }
  }
}
