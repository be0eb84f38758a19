/**
 * Each sequence's own two kwok nodes and the soak's own scheduler (issue 27's drains): every sandbox pod of
 * a sequence is placed by the scheduler `SOAK_SCHEDULER` on one of its namespace's nodes, so a drain — the
 * node cordoned for a while, then uncordoned, by an administrator — moves only that sequence's pods and the
 * sequences side by side never drain each other. Reschedule sandboxes (those with a workspace) move to the
 * other node; the others stay, their drain Blocked.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { outcomeOf, type SequenceContext } from './agent-host.ts';
import { actorClients, type ActorClients } from './kube.ts';

export const SOAK_SCHEDULER = 'soak-scheduler';
export const SEQUENCE_LABEL = 'soak.sandbox.agents.dev/sequence';
export const SEQUENCE_NODES = ['a', 'b'] as const;
export type SequenceNode = (typeof SEQUENCE_NODES)[number];

const KWOK_TAINT = { key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' } as const;
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const nodeName = (namespace: string, node: SequenceNode) => `${namespace}-${node}`;

/** What a sandbox pod template adds to be placed on its sequence's nodes only. */
export const placement = (namespace: string) => ({
  schedulerName: SOAK_SCHEDULER,
  nodeSelector: { [SEQUENCE_LABEL]: namespace },
  tolerations: [{ key: KWOK_TAINT.key, operator: 'Exists', effect: KWOK_TAINT.effect }],
});

export async function createSequenceNodes(clients: ActorClients, namespace: string): Promise<void> {
  for (const node of SEQUENCE_NODES) {
    const name = nodeName(namespace, node);
    await clients.core.createNode({
      body: {
        metadata: {
          name,
          labels: { 'kubernetes.io/hostname': name, type: 'kwok', [SEQUENCE_LABEL]: namespace },
        },
        spec: { taints: [KWOK_TAINT] },
      },
    });
  }
}

/** After the namespace is gone: its pods are too, so nothing is left bound to the nodes. */
export async function deleteSequenceNodes(clients: ActorClients, namespace: string): Promise<void> {
  for (const node of SEQUENCE_NODES)
    await clients.core.deleteNode({ name: nodeName(namespace, node) }).catch((error: unknown) => {
      if (outcomeOf(error) !== 'HTTP 404') throw error;
    });
}

const cordon = (clients: ActorClients, name: string, unschedulable: boolean) =>
  clients.core.patchNode({ name, body: { spec: { unschedulable: unschedulable || null } } }, MERGE);

/**
 * `kubectl drain`'s cordon of the node `pod` runs on (the sequence's first node when it runs on none), for
 * `ms`, then the uncordon. The evictions a drain also tries are the `evict-pod` moves. The op's window is the
 * cordon's (workspace.ts, drainedAt); the uncordon is retried, since a node left cordoned would leave the
 * sequence's other pods nowhere to go.
 */
export async function drainNode(ctx: SequenceContext, pod: string, ms: number): Promise<void> {
  const probe = actorClients(ctx.connections, `soak/${ctx.namespace}/drain-probe`);
  const found = await probe.core.readNamespacedPod({ namespace: ctx.namespace, name: pod }).then(
    (p) => p.spec?.nodeName,
    () => undefined,
  );
  const name = found ?? nodeName(ctx.namespace, 'a');
  const op = ctx.model.begin('drain', `administrator drains node ${name} (of pod ${pod}) for ${ms} ms`, {
    node: name,
  });
  const clients = actorClients(ctx.connections, op.userAgent);
  let outcome = 'ok';
  try {
    await cordon(clients, name, true);
    await sleep(ms);
  } catch (error) {
    outcome = outcomeOf(error);
  }
  for (let attempt = 0; ; attempt++) {
    try {
      await cordon(clients, name, false);
      break;
    } catch (error) {
      if (attempt >= 5) {
        outcome = `uncordon failed: ${outcomeOf(error)}`;
        break;
      }
      await sleep(200);
    }
  }
  ctx.model.end(op, outcome);
}
