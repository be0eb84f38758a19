/**
 * References written after a deletion's final Exclusive decision (issue 25, #7): the erase of the index takes
 * them with the rest, and they are said, since each is an attach that was refused (or a withdraw that failed).
 */
import type { Logger } from 'pino';
import type { SandboxState, SessionReference } from '../../api/objects.ts';
import type { Parsed } from '../../api/parse.ts';
import { isForeignReference } from '../../exclusivity/foreign.ts';
import { referenceEntryOf } from '../../exclusivity/reference.ts';
import type { ReconcilerContext } from '../context.ts';
import type { ListedReference } from '../ports.ts';
import { sandboxRef } from '../erase.ts';

/**
 * What the erase of a finally decided sandbox's index deletes, and which of those are late: foreign to its
 * worktree, or unreadable — references that would have made it not exclusive, written after the decision's
 * LIST, so their attaches were refused. Taken from the erase's own consistent LIST, not the cache: a late
 * reference the cache has not seen yet is erased all the same, and must be said all the same.
 */
export function lateErase(
  live: readonly Parsed<SessionReference>[],
  sandbox: SandboxState,
): { readonly listed: readonly ListedReference[]; readonly late: ReadonlySet<string> } {
  const target = { worktree: sandbox.spec.worktree };
  const listed: ListedReference[] = [];
  const late = new Set<string>();
  for (const parsed of live) {
    if (parsed.ok) {
      const { name, uid, resourceVersion } = parsed.value.metadata;
      listed.push({ name, uid: uid ?? '', resourceVersion: resourceVersion ?? '' });
      if (isForeignReference(referenceEntryOf(parsed.value), target)) late.add(name);
    } else {
      // An unreadable one is named by its key, `namespace/name`, and deleted on the uid and version it was read at.
      const name = parsed.error.objectKey.split('/').at(-1) ?? '';
      const { uid = '', resourceVersion = '' } = parsed.error.identity;
      listed.push({ name, uid, resourceVersion });
      late.add(name);
    }
  }
  return { listed, late };
}

export function reportLate(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  late: ReadonlySet<string>,
  deleted: readonly string[],
  log: Logger,
): void {
  const erased = deleted.filter((name) => late.has(name));
  if (erased.length === 0) return;
  log.warn(
    { late: erased },
    'references written after the Exclusive decision were erased with the index: their attaches were refused',
  );
  ctx.ports.events.record(
    sandboxRef(sandbox),
    'Warning',
    'LateReferencesErased',
    `written after the exclusive decision (their attaches were refused), erased with the index: ${erased.join(', ')}`,
  );
}
