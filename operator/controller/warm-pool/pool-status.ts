/**
 * Pure: a pool's status from its plan: the counts /scale and `kubectl get` show, the selector of its unclaimed
 * sandboxes, and the Ready condition (True while every wanted sandbox is ready and unclaimed).
 */
import type { SandboxWarmPoolStatus } from '../../api/sandbox-warm-pool.ts';
import { LABELS } from '../../api/names.ts';
import { setCondition } from '../conditions.ts';
import type { PoolCounts } from './plan.ts';

/** The label selector of the pool's unclaimed sandboxes (the /scale selector). */
export const unclaimedSelector = (pool: string): string =>
  `${LABELS.warmPool}=${pool},!${LABELS.sandboxClaim}`;

export function poolStatus(
  pool: { readonly name: string; readonly generation: number; readonly status?: SandboxWarmPoolStatus },
  replicas: number,
  template: { readonly name: string; readonly found: boolean },
  counts: PoolCounts,
  now: Date,
): SandboxWarmPoolStatus {
  const ready = !template.found
    ? {
        status: 'False' as const,
        reason: 'TemplateNotFound',
        message: `SandboxTemplate ${template.name} does not exist; no sandbox is made until it does`,
      }
    : counts.ready >= replicas
      ? { status: 'True' as const, reason: 'Replenished', message: `${counts.ready} of ${replicas} ready` }
      : {
          status: 'False' as const,
          reason: 'Replenishing',
          message: `${counts.ready} of ${replicas} ready, ${counts.pending} pending`,
        };
  return {
    observedGeneration: pool.generation,
    replicas: counts.replicas,
    readyReplicas: counts.ready,
    selector: unclaimedSelector(pool.name),
    conditions: setCondition(pool.status?.conditions, { type: 'Ready', ...ready }, now, pool.generation),
  };
}

/** Whether a write would change what is stored (the conditions' times move only on a transition). */
export function statusChanged(
  before: SandboxWarmPoolStatus | undefined,
  after: SandboxWarmPoolStatus,
): boolean {
  return JSON.stringify(before ?? {}) !== JSON.stringify(after);
}
