/**
 * The abnormal-true conditions GitOps engines read (docs/health.md): Reconciling while the pods come up or a
 * deletion is under way or blocked, Stalled (and only Stalled) while the sandbox is Misconfigured, neither once
 * its pods are ready. The kstatus library's own reading of these is tested against the API server
 * (test/integration/gitops/health.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS, type Sandbox } from '../../../operator/api/index.ts';
import { decisionOf, sandboxStatus } from '../../../operator/controller/status.ts';
import type { MisconfigurationState } from '../../../operator/controller/misconfiguration.ts';
import { buildReferenceIndex } from '../../../operator/exclusivity/index.ts';
import { pod, sandbox as sandboxBuilder } from '../builders.ts';
import { attached } from '../fixtures.ts';

const now = new Date('2026-12-01T12:00:00Z');
const index = buildReferenceIndex([attached('own', 'wt-1'), attached('board', 'wt-main')], INDEX_LIMITS);
const refusal = {
  reason: 'AdmissionRefused',
  refused: 'Create pod ns/sbx-0 failed with HTTP 403: denied by pod protection',
  fix: 'run the operator as a trusted user',
};
const foreign = decisionOf(
  {
    verdict: 'Foreign',
    evidence: 'Index',
    blockingReferences: ['board'],
    blockingCount: 1,
    reason: '1 foreign',
  },
  now,
);

function conditionsOf(options: {
  ready: number;
  deleting?: boolean;
  decision?: ReturnType<typeof decisionOf>;
  misconfiguration?: MisconfigurationState;
  status?: Sandbox['status'];
}) {
  const subject = sandboxBuilder('sbx')
    .withMetadata({
      generation: 2,
      ...(options.deleting ? { deletionTimestamp: '2026-12-01T11:59:00Z' } : {}),
    })
    .withSpec({
      replicas: 2,
      worktree: 'wt-1',
      podTemplate: { spec: { containers: [{ name: 'a', image: 'b' }] } },
    })
    .withStatus(options.status)
    .build();
  const status = sandboxStatus({
    sandbox: subject,
    index,
    pods: [0, 1].map((ordinal) => pod('sbx', ordinal, { ready: ordinal < options.ready })),
    reconciliation: { state: 'NotRequired', marker: true },
    decision: options.decision,
    unreferencedSince: undefined,
    erasedFor: undefined,
    misconfiguration: options.misconfiguration,
    now,
  });
  const of = (type: string) => {
    const c = status.conditions?.find((condition) => condition.type === type);
    return c && { status: c.status, reason: c.reason, message: c.message };
  };
  return { status, ready: of('Ready'), reconciling: of('Reconciling'), stalled: of('Stalled') };
}

describe('Reconciling and Stalled', () => {
  it('are both False once every pod is ready: Ready=True alone speaks', () => {
    const { ready, reconciling, stalled } = conditionsOf({ ready: 2 });
    expect(ready).toMatchObject({ status: 'True', reason: 'PodsReady' });
    expect(reconciling).toEqual({ status: 'False', reason: 'PodsReady', message: '' });
    expect(stalled).toEqual({ status: 'False', reason: 'NotStalled', message: '' });
  });

  it('say Reconciling while the pods come up, with how many are ready', () => {
    const { reconciling, stalled } = conditionsOf({ ready: 1 });
    expect(reconciling).toEqual({ status: 'True', reason: 'PodsNotReady', message: '1/2 pods ready' });
    expect(stalled?.status).toBe('False');
  });

  it('say Reconciling while a deletion waits, naming what it waits for', () => {
    const { reconciling, stalled } = conditionsOf({ ready: 2, deleting: true, decision: foreign });
    expect(reconciling).toEqual({
      status: 'True',
      reason: 'DeletionBlocked',
      message: 'the deletion waits: 1 foreign; blocking: board',
    });
    expect(stalled?.status).toBe('False');
  });

  it('say Reconciling while a deletion that is not blocked goes on', () => {
    const exclusive = decisionOf({ verdict: 'Exclusive', evidence: 'Index', reason: 'none foreign' }, now);
    for (const decision of [undefined, exclusive]) {
      const { reconciling } = conditionsOf({ ready: 2, deleting: true, ...(decision ? { decision } : {}) });
      expect(reconciling).toMatchObject({ status: 'True', reason: 'Terminating' });
    }
  });

  it('say Stalled, with the refusal and its fix, while Misconfigured, and then not Reconciling', () => {
    for (const options of [{ ready: 0 }, { ready: 2 }, { ready: 2, deleting: true, decision: foreign }]) {
      const { reconciling, stalled } = conditionsOf({ ...options, misconfiguration: refusal });
      expect(stalled).toEqual({
        status: 'True',
        reason: 'AdmissionRefused',
        message: `${refusal.refused}; fix: ${refusal.fix}`,
      });
      expect(reconciling).toEqual({ status: 'False', reason: 'Stalled', message: '' });
    }
  });

  it('stop saying Stalled once the refusal is resolved', () => {
    const marked = conditionsOf({ ready: 2, misconfiguration: refusal }).status;
    const { stalled, reconciling } = conditionsOf({ ready: 2, misconfiguration: 'Resolved', status: marked });
    expect(stalled).toMatchObject({ status: 'False', reason: 'NotStalled' });
    expect(reconciling?.status).toBe('False');
  });

  it('carry the generation they were computed from, beside status.observedGeneration', () => {
    const { status } = conditionsOf({ ready: 1 });
    expect(status.observedGeneration).toBe(2);
    for (const type of ['Reconciling', 'Stalled'])
      expect(status.conditions?.find((c) => c.type === type)?.observedGeneration).toBe(2);
  });
});
