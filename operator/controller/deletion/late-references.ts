/**
 * References written after a deletion's final Exclusive decision (issue 25, #7): each is an attach that was
 * refused (or a withdraw that failed). The final erase of the index takes the sandbox's own references and leaves
 * these — foreign references of a sandbox that still stands, which the operator's reference review refuses to
 * let anyone delete (docs/adr/0011) — until the finalizer is gone; then they are erased and said.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { SandboxState, SessionReference } from '../../api/objects.ts';
import type { Parsed } from '../../api/parse.ts';
import { isForeignReference } from '../../exclusivity/foreign.ts';
import { referenceEntryOf } from '../../exclusivity/reference.ts';
import type { ReconcilerContext } from '../context.ts';
import type { ListedReference } from '../ports.ts';
import { sandboxRef } from '../erase.ts';

/**
 * What the erase of a finally decided sandbox's index deletes now (`own`: of its worktree) and what it leaves
 * for after the finalizer (`late`: foreign to its worktree, or unreadable — references that would have made it
 * not exclusive, written after the decision's LIST, so their attaches were refused). Taken from the erase's own
 * consistent LIST, not the cache: a late reference the cache has not seen yet is erased all the same, and must be
 * said all the same.
 */
export function lateErase(
  live: readonly Parsed<SessionReference>[],
  sandbox: SandboxState,
): { readonly own: readonly ListedReference[]; readonly late: readonly ListedReference[] } {
  const target = { worktree: sandbox.spec.worktree };
  const own: ListedReference[] = [];
  const late: ListedReference[] = [];
  for (const parsed of live) {
    if (parsed.ok) {
      const { name, uid, resourceVersion } = parsed.value.metadata;
      const listed = { name, uid: uid ?? '', resourceVersion: resourceVersion ?? '' };
      (isForeignReference(referenceEntryOf(parsed.value), target) ? late : own).push(listed);
    } else {
      // An unreadable one is named by its key, `namespace/name`, and deleted on the uid and version it was read at.
      const name = parsed.error.objectKey.split('/').at(-1) ?? '';
      const { uid = '', resourceVersion = '' } = parsed.error.identity;
      late.push({ name, uid, resourceVersion });
    }
  }
  return { own, late };
}

/** The waits between attempts of the late erase: after the finalizer no turn of the sandbox comes again. */
export const LATE_ERASE_RETRY_MS: readonly number[] = [1_000, 4_000];

/**
 * Erases the late references the final erase left, once the finalizer is gone, each preconditioned on what was
 * listed, and says which. One that changed since (a host re-attached) is left to its host, whose refused attach
 * withdraws it. A delete that fails (an API server or review that does not answer) is tried again here, after
 * each of `timing.lateEraseRetryMs` — the Sandbox is gone, and no turn of it comes again — and then left to the
 * hosts too, said. One left counts for a later Sandbox of the name: it fails closed.
 */
export async function eraseLate(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  late: readonly ListedReference[],
  log: Logger,
): Promise<void> {
  const { namespace, name } = sandbox.metadata;
  const waits = ctx.timing.lateEraseRetryMs ?? LATE_ERASE_RETRY_MS;
  for (let attempt = 0; ; attempt += 1) {
    try {
      // Again from the same LIST: one deleted by an attempt that failed later is found gone, and said erased.
      const { deleted, changed } = await ctx.ports.references.deleteAll(namespace, name, late);
      ctx.failpoint('erase-late');
      if (changed.length > 0)
        log.warn(
          { changedSinceListed: changed },
          'late references changed since listed are left to their hosts, whose refused attaches withdraw them',
        );
      reportLate(ctx, sandbox, deleted, log);
      return;
    } catch (error) {
      const wait = waits[attempt];
      const names = late.map((reference) => reference.name);
      if (wait === undefined) {
        log.warn(
          { err: error, late: names, attempts: attempt + 1 },
          'late references could not be erased after the release; left to their hosts, whose refused attaches ' +
            'withdraw them',
        );
        return;
      }
      log.info(
        { err: error, late: names, attempt: attempt + 1, retryInMs: wait },
        'late references could not be erased yet; trying again (no turn of a released sandbox comes again)',
      );
      await sleep(wait);
    }
  }
}

function reportLate(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  erased: readonly string[],
  log: Logger,
): void {
  if (erased.length === 0) return;
  log.warn(
    { late: erased },
    'references written after the Exclusive decision were erased after the release: their attaches were refused',
  );
  ctx.ports.events.record(
    sandboxRef(sandbox),
    'Warning',
    'LateReferencesErased',
    `written after the exclusive decision (their attaches were refused), erased after the release: ${erased.join(', ')}`,
  );
}
