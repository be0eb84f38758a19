// Minimal valid objects for the CRD tests (used when examples/ has none), as plain objects so a test
// can break one field at a time.
import {
  API_VERSION,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
  SESSION_REFERENCE,
} from '../../../operator/api/index.ts';

export type Manifest = Record<string, unknown> & { metadata: { name: string; namespace: string } };

export function sandbox(namespace: string, name: string, spec: Record<string, unknown> = {}): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX.kind,
    metadata: { name, namespace },
    spec: {
      worktree: 'wt-1',
      podTemplate: {
        metadata: { labels: { app: 'agent-sandbox' } },
        spec: {
          containers: [
            { name: 'workspace', image: 'registry.example/sandbox:1', command: ['sleep', 'infinity'] },
          ],
        },
      },
      cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 600 },
      shellReaper: { enabled: true, gracePeriodSeconds: 5 },
      ...spec,
    },
  };
}

export function sessionReference(
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: SESSION_REFERENCE.kind,
    metadata: { name, namespace },
    spec: {
      sandbox: 'sbx-a',
      session: 'workspace_123',
      worktree: 'wt-1',
      route: 'shared-control-v1/wt-1/workspace_123',
      role: 'Subagent',
      parentSession: 'workspace_100',
      state: 'Attached',
      ...spec,
    },
  };
}

export function sandboxTemplate(
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX_TEMPLATE.kind,
    metadata: { name, namespace },
    spec: {
      podTemplate: {
        metadata: { labels: { app: 'agent-sandbox' } },
        spec: {
          containers: [
            { name: 'workspace', image: 'registry.example/sandbox:1', command: ['sleep', 'infinity'] },
          ],
        },
      },
      ...spec,
    },
  };
}

export function sandboxWarmPool(
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX_WARM_POOL.kind,
    metadata: { name, namespace },
    spec: { templateRef: { name: 'python-agent' }, replicas: 3, ...spec },
  };
}

export function sandboxClaim(namespace: string, name: string, spec: Record<string, unknown> = {}): Manifest {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX_CLAIM.kind,
    metadata: { name, namespace },
    spec: {
      warmPoolRef: { name: 'python-pool' },
      session: 'workspace_123',
      worktree: 'wt-1',
      route: 'shared-control-v1/wt-1/workspace_123',
      role: 'Root',
      ...spec,
    },
  };
}

/** `count` copies of `make(i)`. */
export function times<T>(count: number, make: (i: number) => T): T[] {
  return Array.from({ length: count }, (_, i) => make(i));
}
