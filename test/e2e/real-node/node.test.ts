// The real node of the local control plane: it registers beside the kwok nodes and kwok leaves it
// alone, it runs real containers that answer `kubectl exec`, pods that do not ask for it stay off it,
// and a SIGKILLed run leaves no process, mount, cgroup or bridge behind.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { hierarchies } from '@sandbox-operator/local-cluster/node/cgroups';
import type { NodeResources } from '@sandbox-operator/local-cluster/node/teardown';
import { eventually, pending, type Pending } from '../../harness/eventually.ts';
import { kubeConfig, kubectl, testNamespace } from '../../harness/kube.ts';
import { hostProcesses, onRealNode, requireRealNode } from './node.ts';

const ns = testNamespace('real-node');

/** The harness's one wait, with this file's longer default; a check says what it saw with `pending`. */
const waitFor = <T>(what: string, check: () => Promise<T | Pending>, timeoutMs = 120_000) =>
  eventually(what, check, timeoutMs);

describe('the real node', () => {
  it('registers Ready with kubelet and containerd, beside kwok nodes that kwok alone manages', async (ctx) => {
    const node = requireRealNode(ctx);
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const real = await core.readNode({ name: node.name });
    expect(real.status?.nodeInfo?.kubeletVersion).toBe('v1.36.3');
    expect(real.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\//);
    expect(real.status?.addresses).toContainEqual({ type: 'InternalIP', address: '127.0.0.1' });
    expect(real.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const kwok = await core.readNode({ name: 'kwok-node-0' });
    expect(kwok.status?.nodeInfo?.kubeletVersion).toMatch(/^kwok-/);
  });

  it('runs a pod that tolerates it as real containers, and keeps other pods off it', async (ctx) => {
    const node = requireRealNode(ctx);
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const marker = `real-node-marker-${ns}`;
    const pod = (name: string, spec: object): V1Pod => ({
      metadata: { name, namespace: ns },
      spec: {
        shareProcessNamespace: true,
        containers: [
          {
            name: 'agent',
            image: node.shellImage,
            imagePullPolicy: 'Never',
            // $0 is the marker, so the shell's command line names it on the host.
            command: ['sh', '-c', 'while true; do sleep 1; done', marker],
          },
        ],
        ...spec,
      },
    });
    await core.createNamespacedPod({ namespace: ns, body: pod('real', onRealNode({}, node)) });
    await core.createNamespacedPod({ namespace: ns, body: pod('elsewhere', {}) });
    await waitFor('pod real Running', async () => {
      const p = await core.readNamespacedPod({ namespace: ns, name: 'real' });
      return p.status?.phase === 'Running'
        ? p
        : pending({ phase: p.status?.phase, reason: p.status?.reason });
    });
    // The container is a process on this host, and exec reaches it through the API server.
    expect(hostProcesses(marker).length).toBeGreaterThan(0);
    const ps = await kubectl(['exec', '-n', ns, 'real', '-c', 'agent', '--', 'ps']);
    expect(ps.exitCode, ps.stderr).toBe(0);
    expect(ps.stdout).toMatch(/1 65535 +\/pause/);
    expect(ps.stdout).toContain(marker);
    // Unschedulable: kwok nodes and the real node are tainted, and nothing else runs it.
    const elsewhere = await waitFor('pod elsewhere judged unschedulable', async () => {
      const p = await core.readNamespacedPod({ namespace: ns, name: 'elsewhere' });
      const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
      return scheduled?.reason === 'Unschedulable'
        ? p
        : pending({ node: p.spec?.nodeName, scheduled: `${scheduled?.status} (${scheduled?.reason})` });
    });
    expect(elsewhere.spec?.nodeName).toBeUndefined();

    await core.deleteNamespacedPod({ namespace: ns, name: 'real', gracePeriodSeconds: 1 });
    await waitFor('the container process gone', () => {
      const left = hostProcesses(marker);
      return Promise.resolve(left.length === 0 ? true : pending({ processes: left }));
    });
  });
});

describe.runIf(inject('clusterKind') === 'local')('a run with a real node', () => {
  it('leaves no container, shim, mount, cgroup or bridge when the harness is SIGKILLed', async (ctx) => {
    requireRealNode(ctx);
    const fixture = fileURLToPath(new URL('../../harness/fixtures/crashing-node-run.ts', import.meta.url));
    const run = spawn(process.execPath, ['--import', 'tsx', fixture], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: run.stdout }).once('line', resolve);
      run.once('exit', (code) => {
        reject(new Error(`crashing run exited early (${String(code)})`));
      });
    });
    const started = JSON.parse(first) as { tempDir: string; resources: NodeResources; pids: number[] };
    const { cgroupName, bridge, dir } = started.resources;
    // containerd, its shim, the pause and sleep processes, kubelet: all in the node's cgroup.
    expect(started.pids.length).toBeGreaterThanOrEqual(4);
    expect(existsSync(`/sys/class/net/${bridge}`)).toBe(true);
    expect(mountsUnder(dir).length).toBeGreaterThan(0);

    run.kill('SIGKILL');
    await waitFor(
      'the watchdog to tear the node down',
      () => {
        const left = hierarchies().filter((h) => existsSync(`${h}/${cgroupName}`));
        return Promise.resolve(left.length === 0 ? true : pending({ cgroups: left }));
      },
      60_000,
    );
    // Killed processes linger as zombies until init reaps them; none may still run.
    await waitFor('every process of the node to end', () => {
      const left = started.pids.filter((pid) => running(pid));
      return Promise.resolve(left.length === 0 ? true : pending({ running: left }));
    });
    expect(mountsUnder(dir)).toEqual([]);
    // The bridge is the teardown's last step, after the cgroups this test waited for: wait for it in turn
    // (an immediate check lost that race once on a loaded machine).
    await waitFor('the pod bridge deleted', () =>
      Promise.resolve(existsSync(`/sys/class/net/${bridge}`) ? pending({ bridge }) : true),
    );
  });
});

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false; // gone
  }
}

function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
}
