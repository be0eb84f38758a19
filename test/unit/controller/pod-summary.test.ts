import { describe, expect, it } from 'vitest';
import { podSummaryOf } from '../../../operator/controller/pod-summary.ts';

const pod = (ownerReferences?: object[]) => ({
  metadata: {
    name: 'shared-login-0',
    namespace: 'team-a',
    uid: 'u1',
    labels: { 'sandbox.agents.dev/sandbox': 'shared-login', 'sandbox.agents.dev/pod-index': '0' },
    ...(ownerReferences ? { ownerReferences } : {}),
  },
});
const sandboxOwner = { apiVersion: 'sandbox.agents.dev/v1alpha1', kind: 'Sandbox', name: 'shared-login' };

describe('podSummaryOf', () => {
  it('takes a labelled pod owned by its Sandbox', () => {
    expect(podSummaryOf(pod([sandboxOwner]))).toMatchObject({ sandbox: 'shared-login', ordinal: 0 });
  });

  it('ignores a pod that only claims the label (label squatting)', () => {
    expect(podSummaryOf(pod())).toBeUndefined();
    expect(
      podSummaryOf(pod([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'shared-login' }])),
    ).toBeUndefined();
  });

  it('ignores a pod owned by another Sandbox than its label names', () => {
    expect(podSummaryOf(pod([{ ...sandboxOwner, name: 'other' }]))).toBeUndefined();
  });
});
