/** Text for the list forms: kubectl-style tables, a NAMESPACE column with -A. Pure. */
import { age, table } from './format.ts';
import type { DeletionRow, ReferenceListRow } from './list-views.ts';

const NONE = '<none>';

const withNamespace = (all: boolean, headers: string[], rows: { namespace: string; cells: string[] }[]) =>
  all
    ? table(
        ['NAMESPACE', ...headers],
        rows.map((row) => [row.namespace, ...row.cells]),
      )
    : table(
        headers,
        rows.map((row) => row.cells),
      );

export function renderDeletionList(rows: readonly DeletionRow[], all: boolean, now: Date): string {
  if (rows.length === 0) return all ? 'No sandboxes found.\n' : 'No sandboxes found in this namespace.\n';
  return withNamespace(
    all,
    ['NAME', 'WORKTREE', 'PHASE', 'DELETION', 'VERDICT', 'BLOCKING', 'WAITING'],
    rows.map((row) => ({
      namespace: row.namespace,
      cells: [
        row.name,
        row.worktree ?? NONE,
        row.malformed === undefined ? (row.phase ?? NONE) : `malformed (${row.malformed})`,
        row.state,
        row.verdict ?? NONE,
        String(row.blockingCount),
        row.deletionRequestedAt === undefined ? NONE : age(row.deletionRequestedAt, now),
      ],
    })),
  );
}

export function renderReferenceList(rows: readonly ReferenceListRow[], all: boolean): string {
  if (rows.length === 0)
    return all ? 'No SessionReferences found.\n' : 'No SessionReferences found in this namespace.\n';
  return withNamespace(
    all,
    ['NAME', 'SANDBOX', 'SESSION', 'WORKTREE', 'ROLE', 'STATE', 'TURN', 'FOREIGN'],
    rows.map((row) => ({
      namespace: row.namespace,
      cells: [
        row.name,
        row.sandbox ?? NONE,
        row.session ?? NONE,
        row.worktree ?? NONE,
        row.role ?? NONE,
        row.state ?? NONE,
        row.turn ?? NONE,
        row.malformed ? 'yes (malformed)' : row.foreign ? 'yes' : 'no',
      ],
    })),
  );
}
