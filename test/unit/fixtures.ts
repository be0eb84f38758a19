/** Builders in domain words for unit tests. */
import { API_VERSION, type SessionReference } from '../../operator/api/index.ts';
import type { ReferenceEntry } from '../../operator/exclusivity/index.ts';

export function reference(overrides: Partial<ReferenceEntry> & { name: string }): ReferenceEntry {
  return {
    session: `workspace_${overrides.name}`,
    worktree: 'wt-1',
    state: 'Attached',
    role: 'Root',
    route: `shared-control-v1/${overrides.name}`,
    parentSession: undefined,
    ...overrides,
  };
}

export const attached = (name: string, worktree: string | undefined): ReferenceEntry =>
  reference({ name, worktree, state: 'Attached' });

export const tombstone = (name: string, worktree: string | undefined): ReferenceEntry =>
  reference({ name, worktree, state: 'Detached' });

/** `count` references of the target worktree, named ref-0000…, each costing the same bytes. */
export const ownReferences = (count: number, worktree = 'wt-1'): ReferenceEntry[] =>
  Array.from({ length: count }, (_, i) => attached(`ref-${String(i).padStart(4, '0')}`, worktree));

export function sessionReferenceObject(spec: Record<string, unknown>, name = 'sref-a'): SessionReference {
  return {
    apiVersion: API_VERSION,
    kind: 'SessionReference',
    metadata: { name, namespace: 'team-a' },
    spec: {
      sandbox: 'sbx-a',
      session: 'workspace_1',
      route: 'shared-control-v1/x',
      role: 'Root',
      state: 'Attached',
      ...spec,
    },
  };
}
