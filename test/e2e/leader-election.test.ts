/**
 * Two operator processes, one Lease: only the leader reconciles; a graceful stop (SIGTERM) finishes, releases
 * the lease, and the standby takes over without waiting for the lease to expire.
 */
import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { kubeConfig, testNamespace } from '../harness/kube.ts';
import { createSandbox, getSandbox } from '../integration/controller/fixtures.ts';
import { eventually, OPERATOR_NAMESPACE } from '../integration/controller/operator.ts';
import { startOperatorProcess, type OperatorProcess } from './operator-process.ts';

const namespace = testNamespace('leader');
const lease = `e2e-${namespace}`;
const running: OperatorProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((operator) => operator.stop()));
});

const holder = async () =>
  (
    await kubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: OPERATOR_NAMESPACE, name: lease })
  ).spec?.holderIdentity;

describe('leader election', () => {
  it('lets one replica lead and hands over on a graceful stop', async () => {
    const flags = (identity: string) => ({
      flags: ['--leader-elect', 'true', '--lease-name', lease, '--identity', identity],
    });
    const a = await startOperatorProcess(namespace, flags('op-a'));
    running.push(a);
    await eventually('a leads', async () => ((await holder()) === 'op-a' ? true : undefined), 60_000);
    const b = await startOperatorProcess(namespace, flags('op-b'));
    running.push(b);

    await createSandbox(namespace, 'first', { worktree: 'wt-1' });
    await eventually(
      'first reconciled',
      async () => ((await getSandbox(namespace, 'first'))?.status?.phase ? true : undefined),
      60_000,
    );
    expect(await holder()).toBe('op-a');
    expect(b.output()).not.toContain('became leader');

    const stoppedAt = Date.now();
    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(a.output()).toContain('released the leader lease');
    await eventually('b leads', async () => ((await holder()) === 'op-b' ? true : undefined), 60_000);
    // Released, not expired: the standby needs about one retry period (2 s), not the 15 s lease.
    expect(Date.now() - stoppedAt).toBeLessThan(12_000);

    await createSandbox(namespace, 'second', { worktree: 'wt-1' });
    await eventually(
      'second reconciled by b',
      async () => ((await getSandbox(namespace, 'second'))?.status?.phase ? true : undefined),
      60_000,
    );
  });
});
