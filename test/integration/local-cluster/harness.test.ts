// The local control plane is real: the built versions answer, RBAC is enforced, kube-controller-manager
// and kwok act, and stopping (or crashing) leaves no process behind.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { cacheRoot, startLocalCluster, TOOLS, kwokNodeName } from '@sandbox-operator/local-cluster';
import { runStateDir } from '@sandbox-operator/local-cluster/cache';
import { pidAlive } from '@sandbox-operator/local-cluster/pids';
import { reapOrphans } from '@sandbox-operator/local-cluster/reaper';
import { poll } from '@sandbox-operator/local-cluster/net';
import { kubeConfig, kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';

const ns = testNamespace('harness');
const local = inject('clusterKind') === 'local';

async function gone(pids: readonly number[], timeoutMs: number): Promise<boolean> {
  const outcome = await poll(() => Promise.resolve(pids.every((pid) => !pidAlive(pid)) ? true : undefined), {
    timeoutMs,
    intervalMs: 100,
  });
  return outcome.ok;
}

async function notFound(read: () => Promise<unknown>): Promise<boolean> {
  const outcome = await poll(
    async () => {
      try {
        await read();
        return undefined;
      } catch (error: unknown) {
        if ((error as { code?: number }).code === 404) return true;
        throw error;
      }
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  return outcome.ok;
}

describe('the API server', () => {
  it.runIf(local)('reports the pinned release on /version, and kubectl is the pinned client', async () => {
    const version = JSON.parse(await kubectlOk(['version', '-o', 'json'])) as {
      clientVersion: { gitVersion: string };
      serverVersion: { gitVersion: string; major: string; minor: string };
    };
    expect(version.serverVersion.gitVersion).toBe(TOOLS['kube-apiserver'].version);
    expect(`v${version.serverVersion.major}.${version.serverVersion.minor}`).toBe(
      TOOLS['kube-apiserver'].version.split('.').slice(0, 2).join('.'),
    );
    expect(version.clientVersion.gitVersion).toBe(TOOLS.kubectl.version);
  });

  it.runIf(local)(
    'authenticates the restricted user but forbids it to list secrets (RBAC is on)',
    async () => {
      const whoami = await kubectlOk(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], {
        restricted: true,
      });
      expect(whoami).toBe('sandbox-operator');
      const secrets = await kubectl(['get', 'secrets', '-A'], { restricted: true });
      expect(secrets.exitCode).not.toBe(0);
      expect(secrets.stderr).toContain('User "sandbox-operator" cannot list resource "secrets"');
      expect((await kubectl(['get', 'secrets', '-A'])).exitCode).toBe(0);
    },
  );
});

describe('kube-controller-manager', () => {
  it('garbage-collects a dependent whose owner is deleted', async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const owner = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'owner' } },
    });
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! },
          ],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ namespace: ns, name: 'owner' });
    expect(await notFound(() => core.readNamespacedConfigMap({ namespace: ns, name: 'dependent' }))).toBe(
      true,
    );
  });

  it('finishes deleting a namespace', async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const name = `${ns}-doomed`;
    await core.createNamespace({ body: { metadata: { name } } });
    await core.createNamespacedConfigMap({ namespace: name, body: { metadata: { name: 'inside' } } });
    await core.deleteNamespace({ name });
    expect(await notFound(() => core.readNamespace({ name }))).toBe(true);
  });
});

describe('kwok', () => {
  it('runs a pod bound to a fake node, and keeps it while a finalizer remains after deletion', async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const finalizer = 'sandbox.agents.dev/test-hold';
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'held', finalizers: [finalizer] },
        spec: { nodeName: kwokNodeName(0), containers: [{ name: 'main', image: 'registry.invalid/none' }] },
      },
    });
    const running = await poll(
      async () => {
        const pod = await core.readNamespacedPod({ namespace: ns, name: 'held' });
        return pod.status?.phase === 'Running' ? pod : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(running.ok).toBe(true);

    await core.deleteNamespacedPod({ namespace: ns, name: 'held' });
    // kwok answers the deletionTimestamp with a grace-0 delete, as a kubelet would; the finalizer holds.
    const forced = await poll(
      async () => {
        const pod = await core.readNamespacedPod({ namespace: ns, name: 'held' });
        return pod.metadata?.deletionGracePeriodSeconds === 0 ? pod : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(forced.ok && forced.value.metadata?.finalizers).toEqual([finalizer]);

    await core.patchNamespacedPod({
      namespace: ns,
      name: 'held',
      body: [
        { op: 'test', path: '/metadata/finalizers', value: [finalizer] },
        { op: 'remove', path: '/metadata/finalizers' },
      ],
    });
    expect(await notFound(() => core.readNamespacedPod({ namespace: ns, name: 'held' }))).toBe(true);
  });
});

describe.runIf(local)('a second local control plane', () => {
  it('keeps its data across an apiserver restart, and stop() leaves no process or directory', async () => {
    const cluster = await startLocalCluster({ crdDir: null });
    const pids = Object.values(cluster.pids());
    try {
      expect(Object.keys(cluster.pids()).sort()).toEqual(
        ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kwok'].sort(),
      );
      await cluster.kubectl(['create', 'configmap', 'survivor', '--from-literal=k=v']);
      const before = cluster.pids()['kube-apiserver'];
      await cluster.restartApiServer();
      expect(cluster.pids()['kube-apiserver']).not.toBe(before);
      const value = await cluster.kubectl(['get', 'configmap', 'survivor', '-o', 'jsonpath={.data.k}']);
      expect(value.stdout).toBe('v');
      pids.push(cluster.pids()['kube-apiserver']!);
    } finally {
      await cluster.stop();
    }
    expect(await gone(pids, 1_000)).toBe(true);
    expect(existsSync(cluster.tempDir)).toBe(false);
  });

  it('kills what a SIGKILLed run started, and the next run reaps its directories', async () => {
    const fixture = fileURLToPath(new URL('../../harness/fixtures/crashing-run.ts', import.meta.url));
    // Node itself with tsx's loader, so the pid we kill is the run itself, not a launcher.
    const run = spawn(process.execPath, ['--import', 'tsx', fixture], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: run.stdout }).once('line', resolve);
      run.once('exit', (code) => {
        reject(new Error(`crashing run exited early (${code})`));
      });
    });
    const started = JSON.parse(first) as { pids: Record<string, number>; tempDir: string };
    const pids = Object.values(started.pids);
    expect(pids).toHaveLength(2);
    expect(pids.every(pidAlive)).toBe(true);

    run.kill('SIGKILL');
    expect(await gone(pids, 15_000)).toBe(true);

    const reaped = await reapOrphans(runStateDir(cacheRoot()));
    expect(reaped.map((r) => r.ownerPid)).toContain(run.pid);
    expect(existsSync(started.tempDir)).toBe(false);
  });
});
