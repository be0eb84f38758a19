/**
 * Issue 28's judgements: warm pools and sandbox claims (docs/warm-pools.md), from the same audit events. Pure.
 *
 * 13 pool-kept — a claimed or attached sandbox is never destroyed by a pool operation. Every DELETE of a
 *   Sandbox the API server accepted is judged by the version it deleted (the resourceVersion precondition the
 *   pool's and the binding's writes carry names it; else the last version stored before it):
 *   - one carrying the sandbox-claim label is deleted only by the operator, and only once that claim's own
 *     DELETE was recorded (the claim's release, which hands it to the ordinary decision) — never by a pool's
 *     shrink or rollout, nor by the garbage collection of a deleted pool;
 *   - one carrying only the warm-pool label (unclaimed) is deleted by the operator only while no
 *     SessionReference to it exists (created and not yet deleted, by the log).
 *   The ordinary invariants judge the rest: a claimed sandbox is a sandbox of the model from its binding on, so
 *   its pods never stop while another session's reference exists (1), and it is released when exclusive (2).
 * The claim's release may also forget the claim's own reference (invariant 3: `claimRelease`).
 */
import { ANNOTATIONS, LABELS } from '../../operator/api/names.ts';
import type { TimedEvent } from './audit-log.ts';
import type { SandboxVersion } from './versions.ts';

const ok = (e: TimedEvent) => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;
const onSandboxes = (e: TimedEvent) =>
  e.objectRef?.resource === 'sandboxes' && e.objectRef.subresource === undefined;

/** When each sandbox claim's accepted DELETEs were received (a release may begin then), by claim name. */
export function claimDeletes(sorted: readonly TimedEvent[]): ReadonlyMap<string, readonly number[]> {
  const deletes = new Map<string, number[]>();
  for (const e of sorted) {
    if (e.objectRef?.resource !== 'sandboxclaims' || e.objectRef.subresource !== undefined) continue;
    if (e.verb !== 'delete' || !ok(e)) continue;
    const name = e.objectRef.name ?? '';
    deletes.set(name, [...(deletes.get(name) ?? []), e.received]);
  }
  return deletes;
}

/**
 * A DELETE of the claim named `claim` received in [from, to): the claim whose binding began at `from` (a
 * claim of the same name made again later is another claim, and its deletion releases only its own sandbox).
 */
export const releasedBetween = (
  deletes: ReadonlyMap<string, readonly number[]>,
  claim: string,
  from: number,
  to: number,
): number | undefined => deletes.get(claim)?.find((at) => at >= from && at < to);

/** The version of the Sandbox a DELETE removed: its precondition's, else the last one stored before it. */
export function deletedVersion(
  e: TimedEvent,
  versions: readonly SandboxVersion[],
): SandboxVersion | undefined {
  const pre = (
    e.requestObject as { preconditions?: { resourceVersion?: unknown; uid?: unknown } } | undefined
  )?.preconditions;
  const revision = Number(pre?.resourceVersion);
  if (Number.isFinite(revision)) {
    const exact = versions.find((v) => v.revision === revision);
    if (exact !== undefined) return exact;
  }
  const uid = typeof pre?.uid === 'string' ? pre.uid : undefined;
  return versions.findLast((v) => v.at <= e.received && (uid === undefined || v.uid === uid));
}

/** What a DELETE of a Sandbox took: an unclaimed pool sandbox, a claimed one, or neither. */
export type PoolRole = { readonly pool?: string; readonly claim?: string };

export function poolRoleOf(version: SandboxVersion | undefined): PoolRole {
  const labels = version?.labels ?? {};
  const pool = labels[LABELS.warmPool];
  const claim = labels[LABELS.sandboxClaim];
  return { ...(pool === undefined ? {} : { pool }), ...(claim === undefined ? {} : { claim }) };
}

/**
 * The SessionReferences of `sandbox` that exist at `t` by the log (created, not yet deleted), but a sandbox
 * claim's: a claim's binding creates its reference before its patch, so a pool's DELETE accepted meanwhile
 * means that patch will lose and the reference be withdrawn (the decision holds the deletion until then).
 */
export function referencesAt(sorted: readonly TimedEvent[], sandbox: string, t: number): string[] {
  const live = new Map<string, string>();
  for (const e of sorted) {
    if (e.completed > t) break;
    if (e.objectRef?.resource !== 'sessionreferences' || e.objectRef.subresource !== undefined || !ok(e))
      continue;
    const body = e.responseObject as
      | { metadata?: { uid?: string; labels?: Record<string, string> }; spec?: { sandbox?: string } }
      | undefined;
    const name = e.objectRef.name ?? '';
    const claims = body?.metadata?.labels?.[LABELS.sandboxClaim] !== undefined;
    if (e.verb === 'create' && body?.spec?.sandbox === sandbox && !claims)
      live.set(name, body.metadata?.uid ?? '');
    if (e.verb === 'delete') live.delete(name);
  }
  return [...live.keys()];
}

export type PoolLoss = {
  readonly reason: 'claimed' | 'referenced';
  readonly detail: string;
  readonly event: TimedEvent;
};

/** Invariant 13's breaches: deletions of claimed or referenced sandboxes that no claim's release explains. */
export function poolLosses(
  sorted: readonly TimedEvent[],
  versions: ReadonlyMap<string, readonly SandboxVersion[]>,
  operatorUser: string,
  terminating: number,
  soakAgents: ReadonlySet<string>,
): PoolLoss[] {
  const deletes = claimDeletes(sorted);
  const losses: PoolLoss[] = [];
  const byName = (name: string) => versions.get(name) ?? [];
  for (const e of sorted) {
    if (!onSandboxes(e) || e.verb !== 'delete' || !ok(e) || e.received >= terminating) continue;
    if (soakAgents.has(e.userAgent ?? '')) continue; // a user's or GitOps' own deletion: judged as ever
    const name = e.objectRef?.name ?? '';
    const deleted = deletedVersion(e, byName(name));
    const role = poolRoleOf(deleted);
    if (role.claim !== undefined) {
      // The binding: the first version of this incarnation that carries the claim's label.
      const boundAt =
        byName(name).find((v) => v.uid === deleted?.uid && v.labels?.[LABELS.sandboxClaim] === role.claim)
          ?.received ?? -Infinity;
      const released = releasedBetween(deletes, role.claim, boundAt, e.received);
      const byOperator = e.user.username === operatorUser;
      if (!byOperator || released === undefined)
        losses.push({
          reason: 'claimed',
          detail: `Sandbox ${name}, bound to sandbox claim ${role.claim}, deleted ${released === undefined ? 'though that claim was never deleted' : byOperator ? 'before that claim was deleted' : `by ${e.user.username}, not by its claim's release`}`,
          event: e,
        });
    } else if (role.pool !== undefined && e.user.username === operatorUser) {
      const held = referencesAt(sorted, name, e.received);
      if (held.length > 0)
        losses.push({
          reason: 'referenced',
          detail: `unclaimed Sandbox ${name} of pool ${role.pool} deleted by the pool while references to it existed: ${held.join(', ')}`,
          event: e,
        });
    }
  }
  return losses;
}

/** Whether the operator's DELETE of a Sandbox is a pool's or a claim's release (judged here, not as cleanup). */
export function poolOrClaimDelete(e: TimedEvent, versions: ReadonlyMap<string, readonly SandboxVersion[]>) {
  const role = poolRoleOf(deletedVersion(e, versions.get(e.objectRef?.name ?? '') ?? []));
  return role.pool !== undefined || role.claim !== undefined;
}

/**
 * Invariant 3's allowance for a claim's release: the operator may delete a reference made for a sandbox claim
 * (its label) once that claim's DELETE was recorded; while the reference's Sandbox is being deleted (the
 * binding's own withdraw, when the fence it reads shows the deletion); or while the Sandbox has never carried
 * that claim's label (the binding's withdraw when its patch, sent after the reference, lost: another claim won
 * the sandbox, or it was being deleted or fenced — the claim never had it, so no session relied on it).
 */
export function claimRelease(
  object: { metadata?: { labels?: Record<string, string> }; spec?: { sandbox?: string } },
  e: TimedEvent,
  sorted: readonly TimedEvent[],
  versions: ReadonlyMap<string, readonly SandboxVersion[]>,
): boolean {
  const claim = object.metadata?.labels?.[LABELS.sandboxClaim];
  if (claim === undefined) return false;
  const name = e.objectRef?.name;
  const created =
    sorted.findLast(
      (c) =>
        c.objectRef?.resource === 'sessionreferences' &&
        c.objectRef.name === name &&
        c.verb === 'create' &&
        ok(c) &&
        c.received < e.received,
    )?.received ?? -Infinity;
  if (releasedBetween(claimDeletes(sorted), claim, created, e.received) !== undefined) return true;
  const sandbox = object.spec?.sandbox;
  const neverBound = !(versions.get(sandbox ?? '') ?? []).some(
    (v) => v.received < e.received && v.labels?.[LABELS.sandboxClaim] === claim,
  );
  if (sandbox !== undefined && neverBound) return true;
  return sorted.some(
    (d) =>
      onSandboxes(d) &&
      d.verb === 'delete' &&
      ok(d) &&
      d.objectRef?.name === sandbox &&
      d.received < e.received,
  );
}

/**
 * Issue 28's coverage: claims bound warm and cold, the pool's deletions by shrink and by rollout (a sandbox of
 * an older template generation than the template's at the time), and the claims deleted whose sandbox a
 * decision then kept (another session shared it).
 */
export function poolCoverage(
  sorted: readonly TimedEvent[],
  versions: ReadonlyMap<string, readonly SandboxVersion[]>,
  operatorUser: string,
  /** The model's claimed sandboxes: sandbox name to its claim's name. */
  claimedSandboxes: ReadonlyMap<string, string>,
) {
  const launch = new Map<string, string>();
  for (const e of sorted) {
    if (e.objectRef?.resource !== 'sandboxclaims' || !ok(e)) continue;
    const body = e.responseObject as
      { metadata?: { uid?: string }; status?: { launchType?: string } } | undefined;
    const uid = body?.metadata?.uid;
    if (uid !== undefined && body?.status?.launchType !== undefined && !launch.has(uid))
      launch.set(uid, body.status.launchType);
  }
  const templateGeneration = (t: number) => {
    const write = sorted.findLast(
      (e) =>
        e.objectRef?.resource === 'sandboxtemplates' &&
        e.objectRef.subresource === undefined &&
        ok(e) &&
        e.completed <= t,
    );
    return Number(
      (write?.responseObject as { metadata?: { generation?: unknown } } | undefined)?.metadata?.generation,
    );
  };
  let shrinks = 0;
  let rollouts = 0;
  for (const e of sorted) {
    if (!onSandboxes(e) || e.verb !== 'delete' || !ok(e) || e.user.username !== operatorUser) continue;
    const version = deletedVersion(e, versions.get(e.objectRef?.name ?? '') ?? []);
    const role = poolRoleOf(version);
    if (role.pool === undefined || role.claim !== undefined) continue;
    const copied = Number(version?.annotations[ANNOTATIONS.templateGeneration]);
    if (copied < templateGeneration(e.received)) rollouts++;
    else shrinks++;
  }
  const deletes = claimDeletes(sorted);
  let sharedKept = 0;
  for (const [sandbox, claim] of claimedSandboxes) {
    const released = deletes.get(claim)?.[0];
    if (released === undefined) continue;
    const kept = (versions.get(sandbox) ?? []).some(
      (v) => v.at > released && v.deleting && v.status?.decision?.verdict === 'Foreign',
    );
    if (kept) sharedKept++;
  }
  return {
    claimsBoundWarm: [...launch.values()].filter((t) => t === 'Warm').length,
    claimsBoundCold: [...launch.values()].filter((t) => t === 'Cold').length,
    claimsDeleted: [...deletes.values()].reduce((n, list) => n + list.length, 0),
    poolShrinkDeletions: shrinks,
    rolloutReplacements: rollouts,
    claimsDeletedSandboxShared: sharedKept,
  };
}
