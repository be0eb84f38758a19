import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS, LABELS, type Sandbox } from '../../../../operator/api/index.ts';
import { cleanupClock, unreferencedSince } from '../../../../operator/controller/lifecycle.ts';
import { waitsInPool } from '../../../../operator/controller/pool-exemption.ts';
import { judgeSuspension } from '../../../../operator/controller/suspension.ts';
import { buildReferenceIndex, EMPTY_INDEX } from '../../../../operator/exclusivity/index.ts';
import { attached } from '../../fixtures.ts';
import { sandbox } from '../../builders.ts';

const now = new Date('2026-12-03T12:00:00Z');
const inPool = { [LABELS.warmPool]: 'python-pool' };
const claimed = { ...inPool, [LABELS.sandboxClaim]: 'claim-a' };
const poolSandbox = (labels: Record<string, string>): Sandbox =>
  sandbox('python-pool-b2c4d')
    .withMetadata({ labels })
    .withSpec({
      workspace: 'Ephemeral',
      idle: { suspendAfterSeconds: 60 },
      cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 0 },
    })
    .withStatus({ unreferencedSince: '2026-12-03T10:00:00Z', idleSince: '2026-12-03T10:00:00Z' })
    .build();

describe('waitsInPool', () => {
  it('is true for a pool sandbox no claim has bound, false once claimed or outside a pool', () => {
    expect(waitsInPool({ labels: inPool })).toBe(true);
    expect(waitsInPool({ labels: claimed })).toBe(false);
    expect(waitsInPool({ labels: { [LABELS.sandboxClaim]: 'cold-claim' } })).toBe(false);
    expect(waitsInPool({})).toBe(false);
  });
});

describe('an unclaimed pool sandbox', () => {
  it('has no cleanup clock and no unreferenced time, however long it waited', () => {
    const waiting = poolSandbox(inPool);
    expect(cleanupClock(waiting, EMPTY_INDEX, now)).toEqual({ kind: 'Off' });
    expect(unreferencedSince(waiting, EMPTY_INDEX, now)).toBeUndefined();
  });

  it('is never idle', () => {
    expect(judgeSuspension(poolSandbox(inPool), EMPTY_INDEX, now)).toEqual({
      kind: 'Running',
      idleSince: undefined,
      idleInMs: undefined,
    });
  });

  it('once claimed, is an ordinary sandbox: its clocks run, and a reference still counts first', () => {
    const bound = poolSandbox(claimed);
    expect(cleanupClock(bound, EMPTY_INDEX, now).kind).toBe('Due');
    expect(unreferencedSince(bound, EMPTY_INDEX, now)).toBe('2026-12-03T10:00:00Z');
    expect(judgeSuspension(bound, EMPTY_INDEX, now)).toMatchObject({ kind: 'Suspended', reason: 'Idle' });
    const referenced = buildReferenceIndex([attached('a', 'wt-1')], INDEX_LIMITS);
    expect(cleanupClock(poolSandbox(inPool), referenced, now).kind).toBe('Referenced');
  });
});
