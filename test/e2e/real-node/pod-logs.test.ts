// Two local control planes on one machine (the harness's, and the one a test or `npm start` runs beside it)
// each run a kubelet. A kubelet's container GC removes, once a minute, every pod log directory whose pod it does
// not know; with the default pod log directory (/var/log/pods) shared, each removed the other's, and `kubectl
// logs` printed "failed to try resolving symlinks" instead of the container's log from then on (CI of 34715f2:
// the shell reaper's "ready" line never came; of 35ad312: the examples' stand-in's first line). Each kubelet now
// keeps its pod logs in its own node's directory (tools/local-cluster/node/kubelet.ts).
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { startLocalCluster } from '@sandbox-operator/local-cluster';
import { eventually, pending } from '../../harness/eventually.ts';
import { kubeConfig, kubectl, testNamespace } from '../../harness/kube.ts';
import { onRealNode, requireRealNode } from './node.ts';

const ns = testNamespace('pod-logs');
/** Past one container GC period of the second kubelet (a minute, fixed in kubelet) after its sources are ready. */
const BESIDE_MS = 80_000;

describe('a second local control plane on the machine', () => {
  it('leaves the pod logs of the first alone', async (ctx) => {
    const node = requireRealNode(ctx);
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const marker = `pod-log-marker-${ns}`;
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'talker', namespace: ns },
        spec: onRealNode(
          {
            containers: [
              {
                name: 'agent',
                image: node.shellImage,
                imagePullPolicy: 'Never',
                command: ['sh', '-c', `echo ${marker}; while true; do sleep 1; done`],
              },
            ],
          },
          node,
        ),
      },
    });
    const logs = async () => {
      const result = await kubectl(['logs', '-n', ns, 'talker', '-c', 'agent']);
      expect(result.exitCode, result.stderr).toBe(0);
      return result.stdout;
    };
    await eventually(
      'the marker in the pod’s log',
      async () => ((await logs()).includes(marker) ? true : pending(await logs())),
      120_000,
    );

    const beside = await startLocalCluster({
      crdDir: null,
      kwok: false,
      controllerManager: false,
      realNode: { taint: true },
    });
    try {
      expect(beside.realNode, beside.realNodeSkipReason ?? '').not.toBeNull();
      const until = Date.now() + BESIDE_MS;
      while (Date.now() < until) {
        expect(await logs(), 'the log after the second kubelet’s container GC').toContain(marker);
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      }
    } finally {
      await beside.stop();
    }
    expect(await logs()).toContain(marker);
  }, 300_000);
});
