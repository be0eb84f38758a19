import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ANNOTATIONS } from '../../../operator/api/names.ts';
import type { Sandbox } from '../../../operator/api/objects.ts';
import { registerStateGauges, sandboxStates } from '../../../operator/controller/state-metrics.ts';

const now = new Date('2026-01-01T01:00:00Z');
const condition = (type: string, status: 'True' | 'False') => ({
  type,
  status,
  reason: 'Test',
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

function sandbox(name: string, extra: { metadata?: object; status?: object } = {}): Sandbox {
  return {
    apiVersion: 'sandboxes.example.dev/v1alpha1',
    kind: 'Sandbox',
    metadata: { name, namespace: 'team-a', ...extra.metadata },
    spec: { provider: 'kubernetes', replicas: 1, podTemplate: { spec: { containers: [] } } },
    ...(extra.status ? { status: extra.status } : {}),
  } as unknown as Sandbox;
}

const cache = [
  sandbox('running', { status: { phase: 'Running', conditions: [condition('DeletionBlocked', 'False')] } }),
  sandbox('new'),
  sandbox('blocked-long', {
    metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' },
    status: { phase: 'Blocked', conditions: [condition('DeletionBlocked', 'True')] },
  }),
  sandbox('blocked-short', {
    metadata: { deletionTimestamp: '2026-01-01T00:59:00Z' },
    status: { phase: 'Blocked', conditions: [condition('DeletionBlocked', 'True')] },
  }),
  sandbox('full', { status: { phase: 'Running', conditions: [condition('CapacityExceeded', 'True')] } }),
  sandbox('adopted', {
    metadata: { annotations: { [ANNOTATIONS.adoptedFrom]: 'v1' } },
    status: { phase: 'Running', reconciliation: { state: 'Pending', marker: false } },
  }),
  sandbox('adopted-done', {
    metadata: { annotations: { [ANNOTATIONS.adoptedFrom]: 'v1' } },
    status: { phase: 'Running', reconciliation: { state: 'Complete', marker: true } },
  }),
];

describe('sandbox state gauges', () => {
  it('count phases, blocked deletions with the oldest wait, overflow and adopted sandboxes without marker', () => {
    expect(sandboxStates(cache, now)).toEqual({
      byPhase: { Pending: 0, Running: 4, Terminating: 0, Blocked: 2, Unknown: 1 },
      deletionsBlocked: 2,
      oldestBlockedSeconds: 3600,
      overflowed: 1,
      adoptedWithoutMarker: 1,
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
  });
});
