import { describe, expect, it } from 'vitest';
import { podSummaryOf } from '../../../operator/controller/cache/pod-summary.ts';
import { podObject, sandboxOwner } from '../builders.ts';

const pod = (...owners: object[]) => {
  const built = podObject('shared-login', 0).inNamespace('team-a');
  return (owners.length > 0 ? built.ownedBy(...owners) : built).raw();
};

describe('podSummaryOf', () => {
  it('takes a labelled pod owned by its Sandbox', () => {
    expect(podSummaryOf(pod(sandboxOwner('shared-login')))).toMatchObject({
      sandbox: 'shared-login',
      ordinal: 0,
    });
  });

  it('ignores a pod that only claims the label (label squatting)', () => {
    expect(podSummaryOf(pod())).toBeUndefined();
    expect(
      podSummaryOf(pod(sandboxOwner('shared-login', { apiVersion: 'apps/v1', kind: 'ReplicaSet' }))),
    ).toBeUndefined();
  });

  it('ignores a pod owned by another Sandbox than its label names', () => {
    expect(podSummaryOf(pod(sandboxOwner('other')))).toBeUndefined();
  });
});
