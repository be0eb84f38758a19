/**
 * How often issue 25's and 27's judgements had something to judge in a sequence: a clean run proves only as much
 * as its moves reached (refused protected writes, refused guards, recorded Exclusive decisions, late references
 * the operator erased and reported, erases acted on, pods released after a strip; suspensions stored and
 * refused, pods they stopped, workspace claims deleted; drains, pods they moved, pods stopped while idle; issue
 * 28's claims bound warm and cold and deleted, the pool's shrink and rollout deletions, shared claimed sandboxes
 * kept after their claim's deletion, resizes and attaches to claimed sandboxes).
 * Summed in the run's summary.
 */
import { isForeignReference } from '../../operator/exclusivity/index.ts';
import type { TimedEvent } from './audit-log.ts';
import { poolCoverage } from './claims.ts';
import { evictedBeforeStart } from './evictions.ts';
import type { SoakModel } from './model.ts';
import { eraseWindows, sandboxVersions, within } from './versions.ts';
import {
  attachedWindows,
  drainedAt,
  drainWindows,
  idleAt,
  nodeOfDeletedPod,
  suspendedAt,
} from './workspace.ts';

export type Coverage = Readonly<Record<CoverageKey, number>>;

export type CoverageKey =
  | 'protectedWritesRefused'
  | 'guardWritesRefused'
  | 'exclusiveDecisionsRecorded'
  | 'lateReferencesWritten'
  | 'foreignLateReferencesErased'
  | 'lateReferencesReported'
  | 'eraseRequestsPending'
  | 'operatorDeletesDuringErase'
  | 'sandboxesStrippedInTermination'
  | 'suspensionsStored'
  | 'suspensionsRefused'
  | 'podsStoppedBySuspension'
  | 'workspaceClaimsDeleted'
  | 'workspaceClaimDeletesRefused'
  | 'drains'
  | 'podsMovedByDrains'
  | 'podsStoppedWhileIdle'
  | 'podsEvictedBeforeStart'
  | 'replicaDecreasesRefused'
  | 'claimsBoundWarm'
  | 'claimsBoundCold'
  | 'claimsDeleted'
  | 'poolShrinkDeletions'
  | 'rolloutReplacements'
  | 'claimsDeletedSandboxShared'
  | 'poolResizes'
  | 'attachesToClaimed';

const ok = (e: TimedEvent) => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;

/** A sandbox pod's Sandbox: its name without the `-<ordinal>`. */
const sandboxOf = (e: TimedEvent) => e.objectRef?.name?.replace(/-\d+$/, '') ?? '';

export function coverageOf(model: SoakModel, events: readonly TimedEvent[], operatorUser: string): Coverage {
  const sorted = [...events].sort((a, b) => a.completed - b.completed);
  const terminating =
    sorted.find((e) => e.objectRef?.resource === 'namespaces' && e.verb === 'delete' && ok(e))?.completed ??
    Infinity;
  const opOf = (e: TimedEvent) => model.ops.find((op) => op.userAgent === e.userAgent);
  const byOperator = sorted.filter((e) => e.user.username === operatorUser);
  const versions = sandboxVersions(sorted);
  const windows = new Map([...versions].map(([name, list]) => [name, eraseWindows(list)]));
  const late = sorted.filter((e) => opOf(e)?.kind === 'late-reference' && e.verb === 'create' && ok(e));
  const erasedLate = late.filter((created) => {
    const body = created.responseObject as { metadata?: { uid?: string }; spec?: { worktree?: string } };
    const sandbox = model.sandboxes.get(opOf(created)?.sandbox ?? '');
    if (sandbox === undefined || !isForeignReference({ worktree: body.spec?.worktree }, sandbox))
      return false;
    return byOperator.some(
      (e) =>
        e.objectRef?.resource === 'sessionreferences' &&
        e.verb === 'delete' &&
        ok(e) &&
        (e.requestObject as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid ===
          body.metadata?.uid,
    );
  });
  const drains = drainWindows(model.ops);
  // The operator's stops of live sandboxes' pods that no suspension of the spec explains: by a drain's move,
  // or by idleness (the judgement in invariants.ts decides whether each was allowed).
  const unsuspendedStops = byOperator.filter(
    (e) =>
      e.objectRef?.resource === 'pods' &&
      e.objectRef.subresource === undefined &&
      e.verb === 'delete' &&
      ok(e) &&
      e.received < terminating &&
      !suspendedAt(versions.get(sandboxOf(e)) ?? [], e.received),
  );
  const moved = unsuspendedStops.filter(
    (e) =>
      model.sandboxes.get(sandboxOf(e))?.workspace === true &&
      drainedAt(drains.get(nodeOfDeletedPod(e) ?? '') ?? [], e.received),
  );
  const idled = unsuspendedStops.filter(
    (e) =>
      !moved.includes(e) &&
      model.sandboxes.get(sandboxOf(e))?.idleSeconds !== undefined &&
      idleAt(attachedWindows(model.ops, sandboxOf(e)), e.received),
  );
  return {
    protectedWritesRefused: sorted.filter((e) => {
      const kind = opOf(e)?.kind;
      return (kind === 'status-write' || kind === 'strip-finalizer') && e.responseStatus?.code === 403;
    }).length,
    guardWritesRefused: byOperator.filter(
      (e) =>
        e.objectRef?.resource === 'poddisruptionbudgets' &&
        e.responseStatus?.code === 403 &&
        e.received < terminating,
    ).length,
    exclusiveDecisionsRecorded: new Set(
      [...versions.values()].flatMap((list) =>
        list.filter((v) => v.status?.decision?.verdict === 'Exclusive').map((v) => v.uid),
      ),
    ).size,
    lateReferencesWritten: late.length,
    foreignLateReferencesErased: erasedLate.length,
    lateReferencesReported: byOperator.filter(
      (e) =>
        e.objectRef?.resource === 'events' &&
        (e.requestObject as { reason?: string } | undefined)?.reason === 'LateReferencesErased',
    ).length,
    eraseRequestsPending: [...windows.values()].reduce((n, list) => n + list.length, 0),
    operatorDeletesDuringErase: byOperator.filter((e) => {
      if (e.objectRef?.resource !== 'sessionreferences' || e.verb !== 'delete' || !ok(e)) return false;
      return [...windows.values()].some((list) => within(list, e.received));
    }).length,
    sandboxesStrippedInTermination: sorted.filter(
      (e) =>
        opOf(e)?.kind === 'strip-finalizer' &&
        e.objectRef?.resource === 'sandboxes' &&
        ok(e) &&
        e.received >= terminating,
    ).length,
    // Issue 27 (workspace.ts): suspensions the CRD stored and refused (no workspace on claims), the pods the
    // operator stopped for them, the workspace claims deleted (each judged by workspace-kept).
    suspensionsStored: sorted.filter(
      (e) => opOf(e)?.kind === 'suspend' && e.objectRef?.resource === 'sandboxes' && ok(e),
    ).length,
    suspensionsRefused: sorted.filter(
      (e) =>
        opOf(e)?.kind === 'suspend' &&
        e.objectRef?.resource === 'sandboxes' &&
        e.responseStatus?.code === 422,
    ).length,
    podsStoppedBySuspension: byOperator.filter(
      (e) =>
        e.objectRef?.resource === 'pods' &&
        e.objectRef.subresource === undefined &&
        e.verb === 'delete' &&
        ok(e) &&
        suspendedAt(versions.get(sandboxOf(e)) ?? [], e.received),
    ).length,
    workspaceClaimsDeleted: sorted.filter(
      (e) => e.objectRef?.resource === 'persistentvolumeclaims' && e.verb === 'delete' && ok(e),
    ).length,
    workspaceClaimDeletesRefused: sorted.filter(
      (e) =>
        opOf(e)?.kind === 'delete-claim' &&
        e.objectRef?.resource === 'persistentvolumeclaims' &&
        e.responseStatus?.code === 403,
    ).length,
    drains: model.ops.filter((op) => op.kind === 'drain' && op.outcome === 'ok').length,
    podsMovedByDrains: moved.length,
    podsStoppedWhileIdle: idled.length,
    replicaDecreasesRefused: model.ops.filter(
      (op) => op.kind === 'lower-replicas' && op.outcome === 'HTTP 422',
    ).length,
    // Evictions that met a pod before it started (evictions.ts): the API skips the budget, the judge allows it.
    podsEvictedBeforeStart: sorted.filter(
      (e) =>
        e.objectRef?.resource === 'pods' &&
        e.objectRef.subresource === 'eviction' &&
        e.verb === 'create' &&
        ok(e) &&
        evictedBeforeStart(e, sorted),
    ).length,
    // Issue 28 (claims.ts): claims bound warm and cold and deleted, the pool's deletions by shrink and by
    // rollout, claims deleted whose sandbox another session shared (kept), resizes, attaches to claimed ones.
    ...poolCoverage(
      sorted,
      versions,
      operatorUser,
      new Map(
        [...model.sandboxes.values()].flatMap((s) => (s.claim === undefined ? [] : [[s.name, s.claim]])),
      ),
    ),
    poolResizes: model.ops.filter((op) => op.kind === 'scale-pool' && op.outcome === 'ok').length,
    attachesToClaimed: model.ops.filter(
      (op) =>
        op.kind === 'attach' &&
        op.outcome === 'attached' &&
        model.sandboxes.get(op.sandbox ?? '')?.claim !== undefined,
    ).length,
  };
}

export function addCoverage(into: Record<string, number>, more: Coverage): void {
  for (const [key, value] of Object.entries(more)) into[key] = (into[key] ?? 0) + value;
}
