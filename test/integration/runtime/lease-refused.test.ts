/**
 * A replica whose identity may not touch its Lease (a missing Role) cannot lead until a person grants it. It
 * used to warn on every 2 s attempt for ever; it says so once, with the fix, and once more when it clears.
 * The real API server's RBAC refuses, and a real grant ends it.
 */
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { kubeClients } from '../../../operator/kube/clients.ts';
import { LeaderElector } from '../../../operator/runtime/leader.ts';
import { eventually, pending } from '../../harness/eventually.ts';
import { kubeConfig, serviceAccountKubeConfig, testNamespace } from '../../harness/kube.ts';

const namespace = testNamespace('lease-refused');
const account = 'no-lease';
const user = `system:serviceaccount:${namespace}:${account}`;
type Line = { level: number; msg: string; fix?: string };

async function grantLeases(): Promise<void> {
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name: 'leases' },
      rules: [
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: 'leases' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leases' },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
  });
}

describe('a replica its RBAC does not let touch the Lease', () => {
  it('says so once with the fix, keeps trying quietly, and leads once the Role is granted', async () => {
    const lines: Line[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Line) });
    const elector = new LeaderElector(
      kubeClients(await serviceAccountKubeConfig(namespace, account)),
      {
        namespace,
        name: 'refused',
        identity: 'a',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 200,
      },
      log,
    );
    const stop = new AbortController();
    const leading = elector.acquire(stop.signal);
    const stillRefused = () => lines.filter((l) => l.msg === 'the leader lease is still refused').length;
    await eventually('three refused attempts', () =>
      Promise.resolve(stillRefused() >= 2 ? true : pending({ lines: lines.map((l) => l.msg) })),
    );
    await grantLeases();
    expect(await leading).toBe(true);
    stop.abort();

    const said = lines.filter((l) => l.level >= 40);
    expect(said.map((l) => [l.level, l.msg])).toEqual([
      [
        50,
        'the leader lease is refused by a setting only a person can change; this replica cannot lead until it is',
      ],
    ]);
    expect(said[0]?.fix).toContain(
      `kubectl auth can-i get leases.coordination.k8s.io -n ${namespace} --as ${user}`,
    );
    expect(lines.filter((l) => l.msg === 'the leader lease is allowed again')).toHaveLength(1);
  });
});
