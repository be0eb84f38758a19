// The persistent workspace on the real node (issue 27): the sandbox's claim binds to a volume the local
// control plane provisions (kube-controller-manager's hostPath provisioner, the default StorageClass), a file
// written into the workspace through `kubectl exec` outlives the pod (deleted under the override), and the
// replacement pod, a new container on the same claim, reads it back.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ANNOTATIONS } from '../../../operator/api/names.ts';
import { eventually, pending } from '../../harness/eventually.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { startOperatorProcess, type OperatorProcess } from '../operator-process.ts';
import { onRealNode, requireRealNode } from './node.ts';

const namespace = testNamespace('real-workspace');
const POD = 'ws-0';
let operator: OperatorProcess | undefined;

afterAll(async () => {
  await operator?.stop();
});

const podUid = async () => {
  const result = await kubectl(['get', 'pod', POD, '-n', namespace, '-o', 'jsonpath={.metadata.uid}']);
  return result.exitCode === 0 ? result.stdout : '';
};

async function readyPod(other: string): Promise<string> {
  return eventually(
    'a Ready sandbox pod',
    async () => {
      const uid = await podUid();
      if (uid === '' || uid === other) return pending({ uid });
      const ready = await kubectl([
        'get',
        'pod',
        POD,
        '-n',
        namespace,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      ]);
      return ready.stdout === 'True' ? uid : pending({ uid, ready: ready.stdout });
    },
    180_000,
  );
}

describe('a persistent workspace on the real node', () => {
  it(
    'keeps a file written in the workspace across the pod’s replacement',
    { timeout: 400_000 },
    async (ctx) => {
      const node = requireRealNode(ctx);
      // The agent runs as root: a hostPath volume's directory is root's (mode 0750), and fsGroup does not apply
      // to it (docs/operations.md, "Persistent workspace").
      await kubectlOk(['label', 'namespace', namespace, 'pod-security.kubernetes.io/enforce=baseline']);
      operator = await startOperatorProcess(namespace);
      await kubectlOk(['apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'sandbox.agents.dev/v1alpha1',
          kind: 'Sandbox',
          metadata: { name: 'ws', namespace },
          spec: {
            worktree: 'wt-ws',
            volumeClaimTemplates: [
              {
                metadata: { name: 'workspace' },
                spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } },
              },
            ],
            podTemplate: {
              spec: onRealNode(
                {
                  containers: [
                    {
                      name: 'agent',
                      image: node.shellImage,
                      imagePullPolicy: 'Never',
                      command: ['sh', '-c', 'while true; do sleep 1; done'],
                      volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
                    },
                  ],
                },
                node,
              ),
            },
          },
        }),
      });
      const first = await readyPod('');
      const bound = await kubectlOk([
        'get',
        'pvc',
        'workspace-ws',
        '-n',
        namespace,
        '-o',
        'jsonpath={.status.phase}',
      ]);
      expect(bound).toBe('Bound');

      const content = `written by ${first} ${randomBytes(4).toString('hex')}`;
      await kubectlOk([
        'exec',
        '-n',
        namespace,
        POD,
        '-c',
        'agent',
        '--',
        'sh',
        '-c',
        `echo '${content}' > /workspace/note`,
      ]);

      await kubectlOk([
        'annotate',
        'pod',
        POD,
        '-n',
        namespace,
        `${ANNOTATIONS.deletionOverride}=test: replace the pod`,
      ]);
      await kubectlOk(['delete', 'pod', POD, '-n', namespace, '--wait=false']);
      const second = await readyPod(first);
      expect(second).not.toBe(first);

      const read = await kubectlOk([
        'exec',
        '-n',
        namespace,
        POD,
        '-c',
        'agent',
        '--',
        'cat',
        '/workspace/note',
      ]);
      expect(read.trim()).toBe(content);
    },
  );
});
