/** Text for people: kubectl-style tables and the three reports. Pure; `now` is passed in for ages. */
import type { DeletionView } from './deletion-view.ts';
import type { EventSummary } from './ports.ts';
import type { ReferenceRow, ReferencesView } from './references-view.ts';
import type { ShellsView } from './shells-view.ts';

const NONE = '<none>';

/** Columns separated by three spaces, as kubectl prints them; no trailing spaces. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** kubectl's short ages: 42s, 7m, 3h, 12d. */
export function age(since: Date | string | undefined, now: Date): string {
  if (since === undefined) return NONE;
  const seconds = Math.max(0, Math.floor((now.getTime() - new Date(since).getTime()) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7_200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3_600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

const foreignCell = (row: ReferenceRow) => (row.malformed ? 'yes (malformed)' : row.foreign ? 'yes' : 'no');

function referenceTable(rows: readonly ReferenceRow[]): string {
  return table(
    ['NAME', 'SESSION', 'WORKTREE', 'ROLE', 'STATE', 'TURN', 'FOREIGN'],
    rows.map((row) => [
      row.name,
      row.session ?? NONE,
      row.worktree ?? NONE,
      row.role ?? NONE,
      row.state ?? NONE,
      row.turn ?? NONE,
      foreignCell(row),
    ]),
  );
}

const sandboxName = (view: { readonly sandbox: { namespace: string; name: string } }) =>
  `Sandbox ${view.sandbox.namespace}/${view.sandbox.name}`;
const worktreeOf = (worktree: string | undefined) => (worktree ? `worktree ${worktree}` : 'no worktree');

export function renderReferences(view: ReferencesView): string {
  const { counts } = view;
  const summary =
    `${sandboxName(view)} (${worktreeOf(view.sandbox.worktree)}): ${counts.total} reference(s), ` +
    `${counts.attached} attached, ${counts.detached} detached; ${counts.foreign} foreign to its worktree` +
    (counts.malformed > 0 ? `, ${counts.malformed} malformed (counted as foreign)` : '') +
    '.\n';
  const malformed = view.rows
    .filter((row) => row.malformed)
    .map((row) => `  ${row.name}: ${row.malformed ?? ''}\n`)
    .join('');
  if (view.rows.length === 0) return summary;
  return `${referenceTable(view.rows)}\n${summary}${malformed ? `Malformed:\n${malformed}` : ''}`;
}

function eventTable(events: readonly EventSummary[], now: Date): string {
  if (events.length === 0) return '  (none)\n';
  return table(
    ['LAST SEEN', 'TYPE', 'REASON', 'MESSAGE'],
    events.map((event) => [
      age(event.lastSeen, now),
      event.type,
      event.reason,
      event.count > 1 ? `${event.message} (x${event.count})` : event.message,
    ]),
  )
    .split('\n')
    .map((line) => (line ? `  ${line}` : line))
    .join('\n');
}

const HEADLINES: Record<DeletionView['state'], string> = {
  NotDeleting: 'is not being deleted',
  Undecided: 'is being deleted; no decision yet',
  Blocked: 'is being deleted and the deletion is BLOCKED',
  Releasing: 'is being deleted and released (exclusive)',
};

export function renderDeletion(view: DeletionView, now: Date): string {
  const out: string[] = [
    `${sandboxName(view)} (${worktreeOf(view.sandbox.worktree)}) ${HEADLINES[view.state]}` +
      (view.deletionRequestedAt ? ` (requested ${age(view.deletionRequestedAt, now)} ago)` : '') +
      '.\n',
  ];
  const { decision } = view;
  if (decision) {
    out.push(
      `Verdict:    ${decision.verdict} (evidence: ${decision.evidence}), ${age(decision.decidedAt, now)} ago\n`,
    );
    if (decision.reason) out.push(`Reason:     ${decision.reason}\n`);
  }
  if (view.condition)
    out.push(
      `Condition:  DeletionBlocked=${view.condition.status} (${view.condition.reason})` +
        (view.condition.message ? `: ${view.condition.message}` : '') +
        '\n',
    );
  if (view.drain)
    out.push(`Drain:      ${view.drain.type}=True (${view.drain.reason}): ${view.drain.message}\n`);
  if (view.suspended)
    out.push(`Suspended:  Suspended=True (${view.suspended.reason}): ${view.suspended.message}\n`);
  if (view.blocking.length > 0) {
    const total = decision?.blockingCount ?? view.blocking.length;
    out.push(
      `\nBlocking references (${total}${total > view.blocking.length ? `, first ${view.blocking.length} named` : ''}):\n`,
    );
    const live = view.blocking.filter((row): row is ReferenceRow => !('gone' in row));
    if (live.length > 0) out.push(indent(referenceTable(live)));
    for (const row of view.blocking)
      if ('gone' in row)
        out.push(`  ${row.name}: forgotten since the decision; the next reconcile decides again\n`);
  }
  if (view.wouldBlock.length > 0) {
    out.push(`\nReferences that would block a deletion (${view.wouldBlock.length}):\n`);
    out.push(indent(referenceTable(view.wouldBlock)));
  }
  if (view.heldPods.length > 0)
    out.push(`\nPods held by the operator's finalizer: ${view.heldPods.map((pod) => pod.name).join(', ')}\n`);
  out.push(`\n${view.advice.join('\n')}\n`);
  if (view.state !== 'NotDeleting' || view.events.length > 0)
    out.push(`\nRecent events:\n${eventTable(view.events, now)}`);
  return out.join('');
}

export function renderShells(view: ShellsView, now: Date): string {
  const { reference: ref, turn, shells } = view;
  const parent = ref.parentSession ? ` of ${ref.parentSession}` : '';
  const out: string[] = [
    `SessionReference ${ref.namespace}/${ref.name}: ${ref.role} session ${ref.session}${parent} in sandbox ` +
      `${ref.sandbox} (${worktreeOf(ref.worktree)}), ${ref.state}.\n`,
    turn ? `Turn:     ${turn.id} ${turn.phase} (opened by ${turn.origin})\n` : `Turn:     ${NONE}\n`,
    shells
      ? `Shells:   ${shells.retiredGroups} group(s) retired at the end of turn ${shells.retiredTurn}` +
        (shells.retiredAt ? `, ${age(shells.retiredAt, now)} ago` : '') +
        `; ${shells.unreachable} unreachable\n` +
        (shells.message ? `          ${shells.message}\n` : '')
      : 'Shells:   nothing retired for this session yet\n',
    view.reaper
      ? `Reaper:   ${view.reaper.enabled ? `enabled, ${view.reaper.gracePeriodSeconds}s between SIGTERM and SIGKILL` : 'disabled'}\n`
      : '',
  ];
  if (view.notes.length > 0) out.push(`\n${view.notes.join('\n')}\n`);
  out.push(`\nShell reaper events:\n${eventTable(view.events, now)}`);
  return out.join('');
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => (line ? `  ${line}` : line))
    .join('\n');
