/**
 * What the claims bench observes, from watches (the API server's own notifications, not polls): the first
 * time each claim's Ready condition is True, and the first time each pod shows a label value the bench set.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { follow, type Named } from '../peer/measure.ts';

type Claim = Named & {
  status?: {
    launchType?: string;
    conditions?: { type?: string; status?: string }[];
    /** The bound Sandbox: its name (ours) or `{ name }` (agent-sandbox). */
    sandbox?: string | { name?: string };
  };
};

export type Observed = {
  /** name → when first seen (performance.now()). */
  readonly at: Map<string, number>;
  /** Resolves with the observation time of `name` (at once when already seen). */
  when(name: string): Promise<number>;
  stop(): void;
};

function observed(): Omit<Observed, 'stop'> & { see(name: string): void } {
  const at = new Map<string, number>();
  const waiting = new Map<string, (time: number) => void>();
  return {
    at,
    see(name) {
      if (at.has(name)) return;
      const now = performance.now();
      at.set(name, now);
      waiting.get(name)?.(now);
      waiting.delete(name);
    },
    when: (name) => {
      const seen = at.get(name);
      return seen !== undefined
        ? Promise.resolve(seen)
        : new Promise<number>((resolve) => waiting.set(name, resolve));
    },
  };
}

/**
 * Claims' first Ready=True (and the launch type and bound Sandbox a claim said then, when it says them).
 */
export async function watchClaimsReady(
  kc: KubeConfig,
  path: string,
): Promise<Observed & { readonly launchType: Map<string, string>; readonly sandbox: Map<string, string> }> {
  const ready = observed();
  const launchType = new Map<string, string>();
  const sandbox = new Map<string, string>();
  const watch = await follow(new Watch(kc), path, 'claim', (type, object) => {
    // A watch event is the whole object; follow() types only what every watch of the bench reads.
    const claim = object as Claim;
    const name = claim.metadata?.name;
    if (type === 'DELETED' || name === undefined || ready.at.has(name)) return;
    if (!claim.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    if (claim.status.launchType !== undefined) launchType.set(name, claim.status.launchType);
    const bound = claim.status.sandbox;
    const boundName = typeof bound === 'string' ? bound : bound?.name;
    if (boundName !== undefined) sandbox.set(name, boundName);
    ready.see(name);
  });
  return { ...ready, launchType, sandbox, stop: () => watch.stop() };
}

/**
 * Pods of a namespace: when each first ran (`running`), and when each first carried `label` = a value, keyed
 * `<pod>=<value>` (`labelled`), so one pod's successive updates are told apart.
 */
export async function watchPods(
  kc: KubeConfig,
  namespace: string,
  label: string,
): Promise<{ running: Observed; labelled: Observed; stop(): void }> {
  const running = observed();
  const labelled = observed();
  const watch = await follow(new Watch(kc), `/api/v1/namespaces/${namespace}/pods`, 'pod', (type, pod) => {
    const name = pod.metadata?.name;
    if (type === 'DELETED' || name === undefined) return;
    if (pod.status?.phase === 'Running') running.see(name);
    const value = pod.metadata?.labels?.[label];
    if (value !== undefined) labelled.see(`${name}=${value}`);
  });
  const stop = () => watch.stop();
  return { running: { ...running, stop }, labelled: { ...labelled, stop }, stop };
}
