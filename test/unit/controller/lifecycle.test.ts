import { describe, expect, it } from 'vitest';
import { ANNOTATIONS, INDEX_LIMITS, UNOBSERVED_STATUS, type Sandbox } from '../../../operator/api/index.ts';
import {
  capacityLatch,
  cleanupClock,
  inheritedErase,
  initialReconciliation,
  missingOrdinals,
  pendingErase,
} from '../../../operator/controller/lifecycle.ts';
import { buildReferenceIndex, EMPTY_INDEX } from '../../../operator/exclusivity/index.ts';
import { attached } from '../fixtures.ts';
import { sandbox } from '../builders.ts';

const base: Sandbox = sandbox('sbx')
  .withSpec({ replicas: 3, cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 60 } })
  .build();
const with_ = (patch: Partial<Sandbox>): Sandbox => ({ ...base, ...patch });

describe('initialReconciliation', () => {
  it('gives a sandbox the operator created its marker at birth', () => {
    expect(initialReconciliation(base, false)).toEqual({ state: 'NotRequired', marker: true });
  });

  it('leaves an adopted sandbox without the marker: pending with a ledger, failing closed without', () => {
    const adopted = with_({
      metadata: { ...base.metadata, annotations: { [ANNOTATIONS.adoptedFrom]: 'v1' } },
    });
    expect(initialReconciliation(adopted, true)).toMatchObject({ state: 'Pending', marker: false });
    expect(initialReconciliation(adopted, false)).toMatchObject({
      state: 'NotConfigured',
      marker: false,
      message: expect.stringContaining('--ledger-url'),
    });
  });
});

describe('missingOrdinals', () => {
  it('lists the ordinals without a pod; deleting pods still count as present', () => {
    const pod = (ordinal: number, deleting: boolean) => ({
      namespace: 'ns',
      name: `sbx-${ordinal}`,
      uid: '',
      sandbox: 'sbx',
      ordinal,
      deleting,
      finalizers: [],
      ready: true,
      phase: undefined,
      node: undefined,
    });
    expect(missingOrdinals(base, [pod(1, true)])).toEqual([0, 2]);
  });
});

describe('cleanupClock', () => {
  const now = new Date('2026-11-30T12:00:00Z');
  it('waits out the TTL from unreferencedSince, then is due', () => {
    const since = with_({ status: { unreferencedSince: '2026-11-30T11:59:30Z' } });
    expect(cleanupClock(since, EMPTY_INDEX, now)).toEqual({
      kind: 'Waiting',
      since: '2026-11-30T11:59:30Z',
      remainingMs: 30_000,
    });
    expect(cleanupClock(since, EMPTY_INDEX, new Date('2026-11-30T12:00:31Z')).kind).toBe('Due');
  });

  it('never runs while a reference exists, or for Retain', () => {
    expect(cleanupClock(base, buildReferenceIndex([attached('a', 'wt-1')], INDEX_LIMITS), now).kind).toBe(
      'Referenced',
    );
    expect(
      cleanupClock(
        with_({ spec: { ...base.spec, cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 0 } } }),
        EMPTY_INDEX,
        now,
      ).kind,
    ).toBe('Off');
  });
});

describe('the capacity latch and the erase request', () => {
  // As the operator writes it: every status it writes records the reconciliation.
  const overflowed = with_({
    status: {
      capacity: { overflowed: true, limit: 'Bytes', observed: 99_000, max: 98_304, erasedFor: 'INC-1' },
      reconciliation: { state: 'NotRequired', marker: true },
    },
  });

  it('persists an overflow until erased', () => {
    expect(capacityLatch(overflowed.status)).toEqual({ limit: 'Bytes', observed: 99_000, max: 98_304 });
    expect(capacityLatch({ capacity: { overflowed: false } })).toBeUndefined();
  });

  it('acts on each erase annotation value once', () => {
    const annotate = (value: string) => ({
      ...overflowed,
      metadata: { ...overflowed.metadata, annotations: { [ANNOTATIONS.eraseReferences]: value } },
    });
    expect(pendingErase(annotate('INC-1'))).toBeUndefined();
    expect(pendingErase(annotate('INC-2'))).toBe('INC-2');
    expect(pendingErase(base)).toBeUndefined();
  });

  it('takes a value on a sandbox whose status the operator never wrote as inherited, not as a request', () => {
    const annotated = (status: Sandbox['status']) =>
      with_({
        metadata: { ...base.metadata, annotations: { [ANNOTATIONS.eraseReferences]: 'INC-1' } },
        status,
      });
    // No status at all (a CRD without the default), or the API server's default before the first write.
    for (const unwritten of [annotated(undefined), annotated(UNOBSERVED_STATUS)]) {
      expect(pendingErase(unwritten)).toBeUndefined();
      expect(inheritedErase(unwritten)).toBe('INC-1');
    }
    const written = annotated({
      ...UNOBSERVED_STATUS,
      reconciliation: { state: 'NotRequired', marker: true },
    });
    expect(pendingErase(written)).toBe('INC-1');
    expect(inheritedErase(written)).toBeUndefined();
  });
});
