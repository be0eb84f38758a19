/**
 * The binding's series (docs/metrics.md): how long a claim takes to be Ready, by launch type and pool, and
 * how many claims were bound, by launch type. Both exist from the first scrape (at zero for each launch type).
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { LAUNCH_TYPES } from '../binding/records.ts';
import type { BindingRecorder } from '../binding/reconciler.ts';

// Warm claims are expected in tens of milliseconds, cold ones in seconds: buckets for both.
const READY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const CLAIM_READY_SECONDS = 'sandbox_operator_sandbox_claim_ready_seconds';
export const CLAIMS_BOUND_TOTAL = 'sandbox_operator_sandbox_claims_bound_total';

export function bindingMetrics(registry: Registry): BindingRecorder {
  const registers = [registry];
  const ready = new Histogram({
    name: CLAIM_READY_SECONDS,
    help: 'Seconds from a SandboxClaim first seen to its Ready condition True, by launch type and pool.',
    labelNames: ['launch_type', 'pool'],
    buckets: READY_BUCKETS,
    registers,
  });
  const bound = new Counter({
    name: CLAIMS_BOUND_TOTAL,
    help: 'SandboxClaims bound to a sandbox, by launch type (Warm: a ready pool sandbox; Cold: created).',
    labelNames: ['launch_type'],
    registers,
  });
  for (const launchType of LAUNCH_TYPES) bound.inc({ launch_type: launchType }, 0);
  return {
    onBound: (launchType) => bound.inc({ launch_type: launchType }),
    onReady: (launchType, pool, seconds) => ready.observe({ launch_type: launchType, pool }, seconds),
  };
}
