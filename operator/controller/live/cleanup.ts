/**
 * Automatic cleanup (`DeleteWhenUnreferenced`), with the same handshake as a deletion: fence, then a
 * consistent LIST, then a DELETE preconditioned on the fenced object. An attach writes its reference, then
 * reads the Sandbox live and withdraws when it sees the fence; so either the LIST sees the reference (the
 * sandbox stays, the fence is lifted) or the attach is refused — never a session attached to a sandbox that
 * cleanup then deletes.
 */
import type { Logger } from 'pino';
import { ANNOTATIONS } from '../../api/names.ts';
import type { SandboxState } from '../../api/objects.ts';
import type { ReferenceIndex } from '../../exclusivity/reference-index.ts';
import { awaitChange, type Action } from '../../runtime/action.ts';
import { rfc3339 } from '../conditions.ts';
import type { ReconcilerContext } from '../context.ts';
import { incarnationOf } from '../incarnation.ts';
import { sandboxRef } from '../erase.ts';
import type { JsonPatchOp } from '../finalizer.ts';
import { cleanupClock, type CleanupClock } from '../lifecycle.ts';

const FENCE_PATH = `/metadata/annotations/${ANNOTATIONS.cleanupFence.replaceAll('~', '~0').replaceAll('/', '~1')}`;

/** Pure: the JSON Patch that raises the fence, testing the version it was computed from. */
export function raiseFencePatch(sandbox: SandboxState, now: Date): JsonPatchOp[] {
  const { annotations, resourceVersion } = sandbox.metadata;
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: resourceVersion },
    annotations === undefined
      ? { op: 'add', path: '/metadata/annotations', value: { [ANNOTATIONS.cleanupFence]: rfc3339(now) } }
      : { op: 'add', path: FENCE_PATH, value: rfc3339(now) },
  ];
}

/** Pure: the JSON Patch that lifts the fence; undefined when there is none. */
export function liftFencePatch(sandbox: SandboxState): JsonPatchOp[] | undefined {
  const fence = sandbox.metadata.annotations?.[ANNOTATIONS.cleanupFence];
  if (fence === undefined) return undefined;
  return [
    { op: 'test', path: FENCE_PATH, value: fence },
    { op: 'remove', path: FENCE_PATH },
  ];
}

/**
 * Runs the cleanup when its clock is due; lifts a fence left by an earlier pass (or a crash) whenever the
 * sandbox is referenced again. Returns the clock for the caller's requeue, and `awaitChange` once deleted.
 */
export async function cleanUpWhenDue(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  index: ReferenceIndex,
  log: Logger,
): Promise<{ readonly clock: CleanupClock; readonly action?: Action }> {
  const { namespace, name, uid } = sandbox.metadata;
  const clock = cleanupClock(sandbox, index, ctx.now());
  if (clock.kind !== 'Due') {
    const lift = liftFencePatch(sandbox);
    if (lift) {
      await ctx.ports.sandboxes.patchMetadata(incarnationOf(sandbox), lift);
      log.info({ clock: clock.kind }, 'cleanup no longer due; lifted its fence');
    }
    return { clock };
  }
  // 1. The fence: from this write on, an attach that reads the Sandbox withdraws.
  const fenced = await ctx.ports.sandboxes.patchMetadata(
    incarnationOf(sandbox),
    raiseFencePatch(sandbox, ctx.now()),
  );
  // 2. Fresh state after the fence: a reference written before it is in this LIST.
  const live = await ctx.ports.references.listLive(namespace, name);
  if (live.length > 0) {
    log.info(
      { liveReferences: live.length },
      'cleanup due by the cache, but the API server still has references; keeping',
    );
    await ctx.ports.sandboxes.patchMetadata(incarnationOf(sandbox), [{ op: 'remove', path: FENCE_PATH }]);
    return { clock };
  }
  log.info(
    { since: clock.since, policy: sandbox.spec.cleanup.policy },
    'unreferenced past its TTL; deleting the sandbox',
  );
  ctx.ports.events.record(
    sandboxRef(sandbox),
    'Normal',
    'CleanupStarted',
    `no reference since ${clock.since}; deleting`,
  );
  // 3. Preconditioned on the fenced object: any change since the fence (a policy edit, a lifted fence) conflicts.
  await ctx.ports.sandboxes.delete(namespace, name, {
    uid: uid ?? '',
    resourceVersion: fenced.resourceVersion,
  });
  return { clock, action: awaitChange() };
}
