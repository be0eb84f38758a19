/** The legacy walks, when a session ledger is configured (docs/legacy-reconciliation.md): the lane's and the review's. */
import { reconcileSandboxReferences, systemClock, type ReconcileLimits } from '../../ledger-walk/index.ts';
import { httpLedger, httpLocator, legacyEndpoints } from '../../ledger-walk/adapters/http.ts';
import { MARKER_REVIEW_TIMEOUT_SECONDS } from '../../api/operator-review.ts';
import type { LegacyWalk } from '../ports.ts';
import { WalkLane, type WalkLaneOptions } from '../walk-lane/lane.ts';
import type { OperatorConfig } from './config.ts';

/** The walk at admission ends with time to answer before the API server gives up on the marker review. */
export const ADMISSION_WALK_BUDGET_MS = (MARKER_REVIEW_TIMEOUT_SECONDS - 10) * 1000;

function legacyWalk(config: OperatorConfig, limits: ReconcileLimits): LegacyWalk | undefined {
  const endpoints = legacyEndpoints(config);
  if (!endpoints) return undefined;
  const ledger = httpLedger(endpoints.ledger);
  const locator = httpLocator(endpoints.locator);
  return {
    run: (sandbox) =>
      reconcileSandboxReferences({
        target: {
          namespace: sandbox.metadata.namespace,
          sandbox: sandbox.metadata.name,
          provider: sandbox.spec.provider,
          worktree: sandbox.spec.worktree,
        },
        ledger,
        locator,
        clock: systemClock,
        limits,
      }),
  };
}

const limitsOf = (config: OperatorConfig): ReconcileLimits => ({
  budgetMs: config.reconcileBudgetMs,
  perCallMs: config.reconcileCallMs,
  concurrency: config.reconcileConcurrency,
});

export function walkLane(config: OperatorConfig, options: WalkLaneOptions): WalkLane | undefined {
  const walk = legacyWalk(config, limitsOf(config));
  return walk && new WalkLane(walk, options);
}

/** The marker review's walk (controller/marker-review.ts): the lane's, within the review's own budget. */
export function admissionWalk(config: OperatorConfig): LegacyWalk | undefined {
  const limits = limitsOf(config);
  const budgetMs = Math.min(limits.budgetMs, ADMISSION_WALK_BUDGET_MS);
  return legacyWalk(config, { ...limits, budgetMs, perCallMs: Math.min(limits.perCallMs, budgetMs) });
}
