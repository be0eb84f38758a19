/**
 * References written after a deletion's final Exclusive decision (issue 25, #7): the erase of the index takes
 * them with the rest, and they are said, since each is an attach that was refused (or a withdraw that failed).
 */
import type { Logger } from 'pino';
import type { Sandbox } from '../../api/objects.ts';
import { isForeignReference } from '../../exclusivity/foreign.ts';
import { keyOf } from '../cache/store.ts';
import type { ReconcilerContext } from '../context.ts';
import { sandboxRef } from '../erase.ts';

/**
 * The references of a finally decided sandbox that would have made it not exclusive: foreign to its worktree,
 * or unreadable. Written after the decision's LIST, they belong to attaches that were refused.
 */
export function lateReferences(ctx: ReconcilerContext, sandbox: Sandbox): ReadonlySet<string> {
  const key = keyOf(sandbox.metadata.namespace, sandbox.metadata.name);
  const target = { worktree: sandbox.spec.worktree };
  return new Set([
    ...ctx.store
      .references(key)
      .filter((entry) => isForeignReference(entry, target))
      .map((entry) => entry.name),
    // An unreadable one is named by its key, `namespace/name`.
    ...ctx.store.unreadableReferences(key).map((error) => error.objectKey.split('/').at(-1) ?? ''),
  ]);
}

export function reportLate(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
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
