/**
 * `kubectl sandbox why` and `refs` without a name (or with -A): one row per Sandbox — where its deletion
 * stands — or per SessionReference — with its sandbox and whether it is foreign to that sandbox's worktree.
 * Pure; the same predicate and the same states as the single-object views.
 */
import type { Sandbox, SessionReference } from '../../api/objects.ts';
import type { Parsed } from '../../api/parse.ts';
import type { DeletionState } from './deletion-view.ts';
import { referenceRow, type ReferenceRow } from './references-view.ts';

export type DeletionRow = {
  readonly namespace: string;
  readonly name: string;
  readonly worktree: string | undefined;
  readonly phase: string | undefined;
  readonly state: DeletionState;
  readonly verdict: string | undefined;
  readonly blockingCount: number;
  readonly deletionRequestedAt: string | undefined;
  /** `field: problem` when the Sandbox does not match the schema. */
  readonly malformed: string | undefined;
};

export type ReferenceListRow = ReferenceRow & {
  readonly namespace: string;
  readonly sandbox: string | undefined;
};

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

function deletionState(sandbox: Sandbox): DeletionState {
  if (sandbox.metadata.deletionTimestamp === undefined) return 'NotDeleting';
  const decision = sandbox.status?.decision;
  if (decision === undefined) return 'Undecided';
  return decision.verdict === 'Exclusive' ? 'Releasing' : 'Blocked';
}

const timestamp = (value: string | Date | undefined) => (value instanceof Date ? value.toISOString() : value);

export function deletionRows(sandboxes: readonly Parsed<Sandbox>[]): DeletionRow[] {
  return sandboxes
    .map((parsed): DeletionRow => {
      if (!parsed.ok) {
        const [namespace = '', name = ''] = parsed.error.objectKey.split('/');
        const malformed = `${parsed.error.field}: ${parsed.error.problem}`;
        return {
          namespace,
          name,
          worktree: undefined,
          phase: undefined,
          state: 'Undecided',
          verdict: undefined,
          blockingCount: 0,
          deletionRequestedAt: undefined,
          malformed,
        };
      }
      const { metadata, spec, status } = parsed.value;
      const deleting = metadata.deletionTimestamp !== undefined;
      const decision = deleting ? status?.decision : undefined;
      return {
        namespace: metadata.namespace,
        name: metadata.name,
        worktree: spec.worktree,
        phase: status?.phase,
        state: deletionState(parsed.value),
        verdict: decision?.verdict,
        blockingCount: decision?.blockingCount ?? decision?.blockingReferences?.length ?? 0,
        deletionRequestedAt: timestamp(metadata.deletionTimestamp),
        malformed: undefined,
      };
    })
    .sort((a, b) => keyOf(a.namespace, a.name).localeCompare(keyOf(b.namespace, b.name)));
}

export function referenceListRows(
  references: readonly Parsed<SessionReference>[],
  sandboxes: readonly Parsed<Sandbox>[],
  options: { readonly foreignOnly: boolean },
): ReferenceListRow[] {
  const worktrees = new Map<string, string | undefined>();
  for (const parsed of sandboxes)
    if (parsed.ok)
      worktrees.set(
        keyOf(parsed.value.metadata.namespace, parsed.value.metadata.name),
        parsed.value.spec.worktree,
      );
  const rows = references.map((parsed): ReferenceListRow => {
    const namespace = parsed.ok
      ? parsed.value.metadata.namespace
      : (parsed.error.objectKey.split('/')[0] ?? '');
    const sandbox = parsed.ok ? parsed.value.spec.sandbox : undefined;
    const worktree = sandbox === undefined ? undefined : worktrees.get(keyOf(namespace, sandbox));
    return { ...referenceRow(parsed, { namespace, name: sandbox ?? '', worktree }), namespace, sandbox };
  });
  return rows
    .filter((row) => !options.foreignOnly || row.foreign)
    .sort((a, b) => keyOf(a.namespace, a.name).localeCompare(keyOf(b.namespace, b.name)));
}
