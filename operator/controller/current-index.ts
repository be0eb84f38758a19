/**
 * The reference index a reconcile decides on: the cache's, except where the cache cannot be trusted to latch.
 *
 * An overflow latch stays until an administrator erases the index, so it must follow fresh state: a cache
 * still holding references an erase just deleted would latch the sandbox again. A new overflow is therefore
 * confirmed by a consistent LIST before it is recorded; a persisted latch is kept as it is.
 */
import type { SandboxState } from '../api/objects.ts';
import { referenceEntryOf } from '../exclusivity/reference.ts';
import { buildReferenceIndex, type ReferenceIndex } from '../exclusivity/reference-index.ts';
import type { ReconcilerContext } from './context.ts';
import type { Erased } from './erase.ts';
import { capacityLatch } from './lifecycle.ts';
import { keyOf } from './cache/store.ts';

export async function currentIndex(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  erased: Erased | undefined,
  exclude: ReadonlySet<string> = new Set(),
): Promise<ReferenceIndex> {
  const { namespace, name } = sandbox.metadata;
  if (erased !== undefined) return liveIndex(erased.remaining, ctx, exclude);
  const latch = capacityLatch(sandbox.status);
  const cached = buildReferenceIndex(
    ctx.store.references(keyOf(namespace, name)).filter((entry) => !exclude.has(entry.name)),
    ctx.limits,
    latch,
  );
  if (!cached.overflowed || latch !== undefined) return cached;
  return liveIndex(await ctx.ports.references.listLive(namespace, name), ctx, exclude);
}

function liveIndex(
  live: Erased['remaining'],
  ctx: ReconcilerContext,
  exclude: ReadonlySet<string>,
): ReferenceIndex {
  const entries = live.flatMap((parsed) => (parsed.ok ? [referenceEntryOf(parsed.value)] : []));
  return buildReferenceIndex(
    entries.filter((entry) => !exclude.has(entry.name)),
    ctx.limits,
  );
}
