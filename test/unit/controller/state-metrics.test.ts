import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../operator/api/objects.ts';
import { registerStateGauges, sandboxStates } from '../../../operator/controller/wiring/state-metrics.ts';
import { sandbox } from '../builders.ts';

const now = new Date('2026-01-01T01:00:00Z');

const cache: Sandbox[] = [
  sandbox('running').inPhase('Running').withCondition('DeletionBlocked', 'False'),
  sandbox('new'),
  sandbox('blocked-long')
    .deleting('2026-01-01T00:00:00Z')
    .inPhase('Blocked')
    .withCondition('DeletionBlocked', 'True'),
  sandbox('blocked-short')
    .deleting('2026-01-01T00:59:00Z')
    .inPhase('Blocked')
    .withCondition('DeletionBlocked', 'True'),
  sandbox('full').inPhase('Running').withCondition('CapacityExceeded', 'True'),
  sandbox('on-drained-node').inPhase('Running').withCondition('DisruptionBlocked', 'True'),
  sandbox('drain-over').inPhase('Running').withCondition('DisruptionBlocked', 'False'),
  sandbox('adopted').adopted().inPhase('Running').withReconciliation('Pending', false),
  sandbox('adopted-done').adopted().inPhase('Running').withReconciliation('Complete', true),
  sandbox('suspended').inPhase('Suspended').withCondition('Suspended', 'True'),
].map((builder) => builder.build());

describe('sandbox state gauges', () => {
  it('count phases, blocked deletions with the oldest wait, overflow and adopted sandboxes without marker', () => {
    expect(sandboxStates(cache, now)).toEqual({
      byPhase: { Pending: 0, Running: 6, Suspended: 1, Terminating: 0, Blocked: 2, Unknown: 1 },
      deletionsBlocked: 2,
      oldestBlockedSeconds: 3600,
      overflowed: 1,
      adoptedWithoutMarker: 1,
      drainsBlocked: 1,
    });
  });

  it('report zero, not a stale age, once nothing is blocked', () => {
    expect(sandboxStates([cache[0]!], now).oldestBlockedSeconds).toBe(0);
  });

  it('are computed from the cache at scrape time', async () => {
    const registry = new Registry();
    const live: Sandbox[] = [];
    registerStateGauges(
      registry,
      () => live,
      () => now,
    );
    expect(await registry.metrics()).toContain('sandbox_operator_deletions_blocked 0');
    live.push(...cache);
    const text = await registry.metrics();
    expect(text).toContain('sandbox_operator_sandboxes{phase="Blocked"} 2');
    expect(text).toContain('sandbox_operator_deletions_blocked 2');
    expect(text).toContain('sandbox_operator_oldest_blocked_deletion_seconds 3600');
    expect(text).toContain('sandbox_operator_overflowed_sandboxes 1');
    expect(text).toContain('sandbox_operator_adopted_without_marker 1');
    expect(text).toContain('sandbox_operator_drains_blocked 1');
  });
});
