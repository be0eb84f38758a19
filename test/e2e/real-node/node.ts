// What real-node tests share: the node the harness started (or why there is none), a toleration for
// its taint, and the checks that see the host, not only the API.
import { readdirSync, readFileSync } from 'node:fs';
import { inject, type TestContext } from 'vitest';
import { REAL_NODE_TAINT } from '@sandbox-operator/local-cluster/node/index';

export interface RealNodeInfo {
  readonly name: string;
  readonly shellImage: string;
  readonly cgroupName: string;
  readonly containerdSocket: string;
}

/** The real node, or a skip that names why there is none (never a silent pass). */
export function requireRealNode(ctx: TestContext): RealNodeInfo {
  const node = inject('realNode');
  ctx.skip(node === null, `no real node: ${inject('realNodeSkipReason') ?? 'not started'}`);
  if (node === null) throw new Error('unreachable: skipped above');
  return node;
}

export const realNodeToleration = {
  key: REAL_NODE_TAINT.key,
  operator: 'Equal',
  value: REAL_NODE_TAINT.value,
  effect: REAL_NODE_TAINT.effect,
} as const;

/** Places a pod spec on the real node: its toleration and a selector for it. */
export function onRealNode<T extends object>(spec: T, node: RealNodeInfo): T & Record<string, unknown> {
  return {
    ...spec,
    nodeSelector: { 'kubernetes.io/hostname': node.name },
    tolerations: [realNodeToleration],
  };
}

/** The processes of the host whose command line contains `needle` (the witness beyond the API). */
export function hostProcesses(needle: string, podUid?: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      // A pod's containers live in its cgroup (kubelet's cgroupfs driver: .../pod<uid>/<container>), so
      // other tests' pods on the same node do not count.
      const inPod = podUid === undefined || readFileSync(`/proc/${entry}/cgroup`, 'utf8').includes(podUid);
      if (cmdline.includes(needle) && inPod) pids.push(Number(entry));
    } catch {
      // exited while we looked: not running
    }
  }
  return pids;
}
