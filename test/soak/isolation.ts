/**
 * Invariant 14, isolated (issue 26): after the operations settle, every sandbox whose pods stand (not deleting)
 * has its NetworkPolicy — within the release bound, as the operator puts back what a cascade, a kill or a
 * fault took — and a sandbox that is gone left none behind: the policy has no owner, so only its release
 * removes it. A foreground cascade of a blocked sandbox (the users' move) is what once took it.
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import { GROUP, LABELS, SANDBOX, VERSION } from '../../operator/api/names.ts';
import { networkPolicyName } from '../../operator/api/network-policy.ts';
import type { SequenceContext } from './agent-host.ts';
import type { Violation } from './invariants.ts';
import { actorClients } from './kube.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const code = (error: unknown) => (error as { code?: number }).code;

/** Whether `read` finds its object: true, false on 404; anything else is thrown. */
const found = (read: Promise<unknown>) =>
  read.then(
    () => true,
    (error: unknown) => {
      if (code(error) === 404) return false;
      throw error;
    },
  );

async function standingPods(core: CoreV1Api, namespace: string, sandbox: string): Promise<string[]> {
  const pods = await core.listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` });
  return pods.items.filter((pod) => !pod.metadata?.deletionTimestamp).map((pod) => pod.metadata?.name ?? '?');
}

export async function checkIsolation(ctx: SequenceContext, releaseMs: number): Promise<Violation[]> {
  const op = ctx.model.begin('harness', 'check isolation');
  const clients = actorClients(ctx.connections, op.userAgent);
  const { namespace } = ctx;
  const violations = await Promise.all(
    [...ctx.model.sandboxes.keys()].map(async (name): Promise<Violation[]> => {
      const policy = networkPolicyName(name);
      const hasPolicy = () =>
        found(clients.networking.readNamespacedNetworkPolicy({ namespace, name: policy }));
      const sandbox = () =>
        found(
          clients.custom.getNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace,
            plural: SANDBOX.plural,
            name,
          }),
        );
      if (!(await sandbox())) {
        if (!(await hasPolicy())) return [];
        return [
          {
            invariant: 'isolated',
            signature: 'isolated/operator/left-behind',
            message: `Sandbox ${name} is gone but its NetworkPolicy ${policy} is still there`,
          },
        ];
      }
      const pods = await standingPods(clients.core, namespace, name);
      if (pods.length === 0) return [];
      const deadline = Date.now() + releaseMs;
      while (!(await hasPolicy())) {
        if (Date.now() > deadline) {
          // Gone meanwhile (a release that finished) or its pods gone: nothing left to isolate.
          const still = (await sandbox()) ? await standingPods(clients.core, namespace, name) : [];
          if (still.length === 0) return [];
          return [
            {
              invariant: 'isolated',
              signature: 'isolated/operator/missing',
              message: `pods ${still.join(', ')} of Sandbox ${name} run without its NetworkPolicy ${policy} for ${releaseMs} ms`,
            },
          ];
        }
        await sleep(250);
      }
      return [];
    }),
  );
  ctx.model.end(op, 'ok');
  return violations.flat();
}
