/**
 * Two operator processes, one Lease: only the leader reconciles; a graceful stop (SIGTERM) finishes, releases
 * the lease, and the standby takes over without waiting for the lease to expire.
 */
import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { kubeConfig, testNamespace } from '../harness/kube.ts';
import { createSandbox, untilSandbox } from '../integration/controller/fixtures.ts';
import { eventually, OPERATOR_NAMESPACE, pending } from '../integration/controller/operator.ts';
import { startOperatorProcess, type OperatorProcess } from './operator-process.ts';

const namespace = testNamespace('leader');
const lease = `e2e-${namespace}`;
const running: OperatorProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((operator) => operator.stop()));
});

const leaseSpec = async () =>
  (
    await kubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: OPERATOR_NAMESPACE, name: lease })
  ).spec;
const holder = async () => (await leaseSpec())?.holderIdentity;
/** `identity` holds the lease; else who did, as last seen. */
const leads = async (identity: string) => {
  const seen = await holder();
  return seen === identity ? true : pending({ holder: seen ?? 'nobody' });
};

describe('leader election', () => {
  it('lets one replica lead and hands over on a graceful stop', async () => {
    const flags = (identity: string) => ({
      flags: ['--leader-elect', 'true', '--lease-name', lease, '--identity', identity],
    });
    const a = await startOperatorProcess(namespace, flags('op-a'));
    running.push(a);
    await eventually('a leads', async () => leads('op-a'), 60_000);
    const b = await startOperatorProcess(namespace, flags('op-b'));
    running.push(b);

    await createSandbox(namespace, 'first', { worktree: 'wt-1' });
    await untilSandbox(namespace, 'first', 'first reconciled', (s) => s.status?.phase !== undefined, 60_000);
    expect(await holder()).toBe('op-a');
    expect(b.output()).not.toContain('became leader');

    // a's lease as last seen before it stops: it would expire leaseDurationSeconds after this renew at the earliest.
    const held = await leaseSpec();
    const expiresNoEarlierThan =
      new Date(held?.renewTime ?? 0).getTime() + (held?.leaseDurationSeconds ?? 0) * 1000;
    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(a.output()).toContain('released the leader lease');
    await eventually('b leads', async () => leads('op-b'), 60_000);
    // Released, not expired: the lease records that b acquired it before a's lease could have expired.
    const taken = await leaseSpec();
    expect(held?.leaseDurationSeconds).toBe(15);
    expect(new Date(taken?.acquireTime ?? Infinity).getTime()).toBeLessThan(expiresNoEarlierThan);

    await createSandbox(namespace, 'second', { worktree: 'wt-1' });
    await untilSandbox(
      namespace,
      'second',
      'second reconciled by b',
      (s) => s.status?.phase !== undefined,
      60_000,
    );
  });
});
