/**
 * One turn of a SandboxClaim (docs/warm-pools.md, "Claims"): a deleted claim is released (release.ts); a new
 * one gets its finalizer, then is bound (bind.ts) and its status written; a bound one's Ready follows its
 * sandbox's. Level-triggered: every turn starts from the cache and live reads, never from the event.
 *
 * A claim that cannot be bound says why in its Bound condition (the reason names the field to fix) and in a
 * Warning Event when that reason is new, and is looked at again later: never retried silently, never dropped.
 */
import type { Logger } from 'pino';
import { API_VERSION, SANDBOX_CLAIM, SANDBOX_CLAIM_FINALIZER } from '../../api/names.ts';
import { awaitChange, requeueAfter, type Action } from '../../runtime/action.ts';
import { addFinalizerPatch } from '../finalizer.ts';
import { bindClaim, type BindingContext } from './bind.ts';
import { becameReady, boundStatus, sameStatus, unboundStatus, type Unbound } from './claim-status.ts';
import type { ClaimRecord, ClaimStatus, LaunchType } from './records.ts';
import { releaseClaim } from './release.ts';

export type BindingRecorder = {
  readonly onBound: (launchType: LaunchType) => void;
  /** The claim's Ready turned True this long after the claim was first seen. */
  readonly onReady: (launchType: LaunchType, pool: string, seconds: number) => void;
};

export type ClaimReconcilerContext = BindingContext & {
  readonly recorder: BindingRecorder;
  /**
   * The bound statuses this replica wrote that its cache has not shown yet, by claim uid: a turn that runs
   * before the watch delivers the write (the finalizer's event makes the key dirty while the binding runs)
   * reads the binding from here instead of binding again. Dropped once the cache shows it.
   */
  readonly written: Map<string, ClaimStatus>;
};

/**
 * A missing pool or template is created by a person: looked at again this often, not at once. A pool that
 * appears brings the claims naming it sooner (the cache's pool watch); this is the backstop, and templates'.
 */
export const MISSING_RETRY_MS = 15_000;
/** A binding that lost every race of its turn tries again soon. */
export const BINDING_RETRY_MS = 250;

export async function reconcileSandboxClaim(
  ctx: ClaimReconcilerContext,
  key: string,
  parentLog: Logger,
): Promise<Action> {
  const cached = ctx.cache.claim(key);
  if (cached === undefined) return awaitChange();
  const claim = withWritten(ctx, cached);
  const log = parentLog.child({ sandboxClaim: key });
  if (claim.deleting) {
    ctx.written.delete(claim.uid);
    if (!claim.finalizers.includes(SANDBOX_CLAIM_FINALIZER)) return awaitChange();
    const released = await releaseClaim(ctx.ports, claim, log);
    return released.kind === 'Released' ? awaitChange() : requeueAfter(BINDING_RETRY_MS);
  }
  const add = addFinalizerPatch(claim, SANDBOX_CLAIM_FINALIZER);
  if (add !== undefined) {
    const written = await ctx.ports.claims.patchMetadata(claim, add);
    // Nothing is bound before the finalizer stands: a claim deleted meanwhile would leave its sandbox behind.
    if (written !== 'Written') return written.kind === 'Gone' ? awaitChange() : requeueAfter(0);
  }
  const { sandbox: bound } = claim.status;
  if (bound !== undefined) return observe(ctx, claim, bound, log);
  const outcome = await bindClaim(ctx, claim, log, add !== undefined);
  if (outcome.kind === 'Unbound') return refuse(ctx, claim, outcome.unbound, log);
  const status = boundStatus(claim.status, outcome.binding, outcome.sandbox, ctx.now(), claim.generation);
  await ctx.ports.claims.writeStatus(claim, status);
  ctx.written.set(claim.uid, status);
  ctx.recorder.onBound(outcome.binding.launchType);
  log.info(
    { ...outcome.binding, pool: outcome.pool, ready: readyStatus(status) },
    outcome.binding.launchType === 'Warm' ? 'claim bound a ready pool sandbox' : 'claim bound a cold sandbox',
  );
  ctx.ports.events.record(target(claim), 'Normal', 'Bound', messageOf(status, 'Bound'));
  recordReady(ctx, claim, status, key);
  return awaitChange();
}

/** The claim with the status this replica last wrote, while its cache has not caught up with it. */
function withWritten(ctx: ClaimReconcilerContext, claim: ClaimRecord): ClaimRecord {
  const written = ctx.written.get(claim.uid);
  if (written === undefined) return claim;
  if (claim.status.sandbox !== undefined && sameStatus(written, claim.status)) {
    ctx.written.delete(claim.uid);
    return claim;
  }
  return claim.status.sandbox === undefined ? { ...claim, status: written } : claim;
}

async function observe(ctx: ClaimReconcilerContext, claim: ClaimRecord, bound: string, log: Logger) {
  const { sandbox, reference, launchType, boundAt } = claim.status;
  if (sandbox === undefined || reference === undefined || launchType === undefined || boundAt === undefined) {
    log.warn({ status: claim.status }, 'bound claim’s status is incomplete; leaving it as it is');
    return awaitChange();
  }
  const status = boundStatus(
    claim.status,
    { sandbox, reference, launchType, boundAt },
    ctx.cache.sandbox(claim.namespace, bound),
    ctx.now(),
    claim.generation,
  );
  if (sameStatus(status, claim.status)) return awaitChange();
  await ctx.ports.claims.writeStatus(claim, status);
  ctx.written.set(claim.uid, status);
  log.info({ sandbox: bound, ready: readyStatus(status) }, 'claim’s Ready follows its sandbox');
  recordReady(ctx, claim, status, `${claim.namespace}/${claim.name}`);
  return awaitChange();
}

async function refuse(ctx: ClaimReconcilerContext, claim: ClaimRecord, unbound: Unbound, log: Logger) {
  const status = unboundStatus(claim.status, unbound, ctx.now(), claim.generation);
  const before = claim.status.conditions?.find((c) => c.type === 'Bound');
  if (!sameStatus(status, claim.status)) await ctx.ports.claims.writeStatus(claim, status);
  if (unbound.reason === 'Binding') {
    log.debug({ reason: unbound.reason }, unbound.message);
    return requeueAfter(BINDING_RETRY_MS);
  }
  if (before?.reason !== unbound.reason) {
    log.warn({ reason: unbound.reason }, `claim cannot be bound: ${unbound.message}`);
    ctx.ports.events.record(target(claim), 'Warning', unbound.reason, unbound.message);
  }
  return requeueAfter(MISSING_RETRY_MS);
}

function recordReady(ctx: ClaimReconcilerContext, claim: ClaimRecord, status: ClaimStatus, key: string) {
  if (!becameReady(claim.status, status) || status.launchType === undefined) return;
  const since = ctx.cache.firstSeen(key) ?? Date.parse(claim.creationTimestamp ?? '');
  if (Number.isNaN(since)) return;
  const seconds = Math.max(0, (ctx.now().getTime() - since) / 1000);
  ctx.recorder.onReady(status.launchType, claim.spec.warmPoolRef?.name ?? '', seconds);
}

const readyStatus = (status: ClaimStatus) => status.conditions?.find((c) => c.type === 'Ready')?.status;
const messageOf = (status: ClaimStatus, type: string) =>
  status.conditions?.find((c) => c.type === type)?.message ?? '';
const target = (claim: ClaimRecord) => ({
  kind: SANDBOX_CLAIM.kind,
  apiVersion: API_VERSION,
  namespace: claim.namespace,
  name: claim.name,
  uid: claim.uid,
});
