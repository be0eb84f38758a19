/** The legacy walks' lane, when a session ledger is configured (docs/legacy-reconciliation.md). */
import { reconcileSandboxReferences, systemClock } from '../../ledger-walk/index.ts';
import { httpLedger, httpLocator, legacyEndpoints } from '../../ledger-walk/adapters/http.ts';
import type { LegacyWalk } from '../ports.ts';
import { WalkLane, type WalkLaneOptions } from '../walk-lane/lane.ts';
import type { OperatorConfig } from './config.ts';

export function walkLane(config: OperatorConfig, options: WalkLaneOptions): WalkLane | undefined {
  const endpoints = legacyEndpoints(config);
  if (!endpoints) return undefined;
  const ledger = httpLedger(endpoints.ledger);
  const locator = httpLocator(endpoints.locator);
  const limits = {
    budgetMs: config.reconcileBudgetMs,
    perCallMs: config.reconcileCallMs,
    concurrency: config.reconcileConcurrency,
  };
  const walk: LegacyWalk = {
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
  return new WalkLane(walk, options);
}
