/** Raw pool sandboxes and claims as the API server returns them, for the binding's unit tests. */
import type { BindingSandbox, ClaimRecord } from '../../../../operator/controller/binding/records.ts';

export const POOL = { name: 'python-pool', uid: 'pool-uid-1' };

export function poolSandbox(name: string, overrides: Partial<BindingSandbox> = {}): BindingSandbox {
  return {
    namespace: 'team-a',
    name,
    uid: `${name}-uid`,
    resourceVersion: '10',
    creationTimestamp: '2026-12-03T07:00:00Z',
    pool: POOL.name,
    template: 'python-agent',
    owners: [
      {
        apiVersion: 'sandbox.agents.dev/v1alpha1',
        kind: 'SandboxWarmPool',
        name: POOL.name,
        uid: POOL.uid,
        controller: true,
      },
    ],
    deleting: false,
    fenced: false,
    ready: { status: 'True', reason: 'PodsReady' },
    ...overrides,
  };
}

export function claimRecord(overrides: Partial<ClaimRecord> = {}): ClaimRecord {
  return {
    namespace: 'team-a',
    name: 'claim-1',
    uid: 'claim-uid-1',
    resourceVersion: '5',
    generation: 1,
    creationTimestamp: '2026-12-03T07:00:00Z',
    deleting: false,
    finalizers: [],
    spec: {
      warmPoolRef: { name: POOL.name },
      session: 'workspace_1',
      worktree: 'wt-1',
      route: 'shared-control-v1/r',
      role: 'Root',
    },
    status: {},
    ...overrides,
  };
}
