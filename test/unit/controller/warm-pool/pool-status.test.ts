import { describe, expect, it } from 'vitest';
import { LABELS } from '../../../../operator/api/names.ts';
import { poolStatus, statusChanged } from '../../../../operator/controller/warm-pool/pool-status.ts';

const now = new Date('2026-12-03T08:00:00Z');
const pool = { name: 'python-pool', generation: 4 };
const found = { name: 'python-agent', found: true };

describe('poolStatus', () => {
  it('says the counts, the unclaimed selector and Ready once every wanted sandbox is ready', () => {
    expect(poolStatus(pool, 3, found, { replicas: 3, ready: 3, pending: 0 }, now)).toEqual({
      observedGeneration: 4,
      replicas: 3,
      readyReplicas: 3,
      selector: `${LABELS.warmPool}=python-pool,!${LABELS.sandboxClaim}`,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Replenished',
          message: '3 of 3 ready',
          lastTransitionTime: '2026-12-03T08:00:00Z',
          observedGeneration: 4,
        },
      ],
    });
  });

  it('is not Ready while replenishing, nor without its template', () => {
    const replenishing = poolStatus(pool, 3, found, { replicas: 2, ready: 1, pending: 2 }, now);
    expect(replenishing.conditions?.[0]).toMatchObject({
      status: 'False',
      reason: 'Replenishing',
      message: '1 of 3 ready, 2 pending',
    });
    const missing = poolStatus(
      pool,
      3,
      { name: 'gone', found: false },
      { replicas: 0, ready: 0, pending: 0 },
      now,
    );
    expect(missing.conditions?.[0]).toMatchObject({ status: 'False', reason: 'TemplateNotFound' });
    expect(missing.conditions?.[0]?.message).toContain('SandboxTemplate gone does not exist');
  });
});

describe('statusChanged', () => {
  it('ignores key order (the API server stores its own), and sees any value change', () => {
    const status = poolStatus(pool, 1, found, { replicas: 1, ready: 1, pending: 0 }, now);
    const reordered = JSON.parse(JSON.stringify(status, Object.keys(status).sort())) as typeof status;
    expect(statusChanged({ ...reordered, conditions: status.conditions }, status)).toBe(false);
    expect(statusChanged({ ...status, readyReplicas: 0 }, status)).toBe(true);
    expect(statusChanged(undefined, status)).toBe(true);
  });
});
