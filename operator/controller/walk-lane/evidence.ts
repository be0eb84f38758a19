/**
 * The legacy evidence of a sandbox: the persisted marker, the outcome of a walk the lane finished, or the
 * persisted outcome of a recent walk (never retried in a tight loop); else a walk is due. Converting outcomes
 * to status lives here too.
 */
import type { SandboxState } from '../../api/objects.ts';
import type { LegacyEvidence } from '../../exclusivity/exclusivity.ts';
import { earnsMarker, type ReconciliationOutcome } from '../../api/reconciliation-outcome.ts';
import { rfc3339 } from '../conditions.ts';
import type { ReconcilerContext } from '../context.ts';
import { initialReconciliation, type ReconciliationStatus } from '../lifecycle.ts';

export type LegacyResult = {
  readonly evidence: LegacyEvidence;
  readonly reconciliation: ReconciliationStatus;
};

export function reconciliationStatusOf(outcome: ReconciliationOutcome, now: Date): ReconciliationStatus {
  const completedAt = rfc3339(now);
  const { stats } = outcome;
  const summary = `${stats.owners} owner(s), ${stats.lookedUp} session(s) looked up, ${stats.skippedLegacy} legacy skipped, ${stats.timedOut} timed out, ${stats.elapsedMs} ms`;
  if (earnsMarker(outcome))
    return { state: 'Complete', marker: true, completedAt, message: `legacy walk complete: ${summary}` };
  return {
    state: outcome.kind,
    marker: false,
    completedAt,
    message: `${outcome.reason} (${summary})`.slice(0, 1024),
  };
}

function persistedOutcome(status: ReconciliationStatus): ReconciliationOutcome {
  const stats = { owners: 0, lookedUp: 0, skippedLegacy: 0, timedOut: 0, failed: 0, elapsedMs: 0 };
  const reason = `last legacy walk at ${status.completedAt ?? 'never'}: ${status.message ?? status.state}`;
  switch (status.state) {
    case 'Foreign':
      return { kind: 'Foreign', evidence: 'Reconciliation', owner: undefined, reason, stats };
    case 'Unavailable':
      return { kind: 'Unavailable', owner: undefined, reason, stats };
    case 'Pending':
    case 'Incomplete':
    case 'Complete':
    case 'NotConfigured':
    case 'NotRequired':
      return { kind: 'Incomplete', cause: 'Deferred', owner: undefined, reason, stats };
  }
}

/**
 * What a turn knows of the legacy evidence without waiting: ready (the marker, a walk's outcome kept by the
 * lane, or a recent persisted outcome), or a walk is due, or one is under way. The caller starts a due walk
 * in the lane (lane.ts); its outcome comes back to a later turn.
 */
export type LegacyLook =
  | { readonly kind: 'ready'; readonly result: LegacyResult }
  | { readonly kind: 'walk-due'; readonly persisted: ReconciliationStatus }
  | { readonly kind: 'walk-under-way'; readonly persisted: ReconciliationStatus };

const reconciliationOf = (ctx: ReconcilerContext, sandbox: SandboxState): ReconciliationStatus =>
  sandbox.status?.reconciliation ?? initialReconciliation(sandbox, ctx.legacy !== undefined);

/** The sandbox carries its marker (or never needed one): its legacy evidence is ready without a walk. */
export const hasMarker = (ctx: ReconcilerContext, sandbox: SandboxState): boolean =>
  reconciliationOf(ctx, sandbox).marker;

export function legacyEvidence(ctx: ReconcilerContext, sandbox: SandboxState, deleting: boolean): LegacyLook {
  const current = reconciliationOf(ctx, sandbox);
  if (current.marker) return ready({ kind: 'Marked' }, current);
  // From here on the sandbox is adopted and unmarked, whatever its annotations say now: once adopted, always
  // adopted (a replace that drops the annotation must not mint the marker). Only a completed walk sets it.
  if (!ctx.legacy) return ready({ kind: 'NotConfigured' }, notConfigured(current));
  const spacing = deleting ? ctx.timing.legacyRetryWhileDeletingMs : ctx.timing.legacyRetryMs;
  const walk = ctx.legacy.state(sandbox);
  if (walk.kind === 'finished') {
    const reconciliation = reconciliationStatusOf(walk.outcome, walk.finishedAt);
    // Until a status write carries it, the kept outcome is the evidence — for as long as a persisted one would
    // be: a write the marker review keeps refusing (its walk at admission did not complete) must not hold the
    // status for ever. Then the persisted one is.
    if (!persistedSince(current, reconciliation)) {
      if (ctx.now().getTime() - walk.finishedAt.getTime() >= spacing)
        return { kind: 'walk-due', persisted: current };
      return ready({ kind: 'Reconciled', outcome: walk.outcome }, reconciliation);
    }
    ctx.legacy.settle(sandbox);
  }
  if (walk.kind === 'under-way') return { kind: 'walk-under-way', persisted: current };
  const last = current.completedAt ? Date.parse(current.completedAt) : undefined;
  if (last !== undefined && ctx.now().getTime() - last < spacing)
    return ready({ kind: 'Reconciled', outcome: persistedOutcome(current) }, current);
  return { kind: 'walk-due', persisted: current };
}

const ready = (evidence: LegacyEvidence, reconciliation: ReconciliationStatus): LegacyLook => ({
  kind: 'ready',
  result: { evidence, reconciliation },
});

/** The status already carries this walk's completion, or a later one's. */
function persistedSince(current: ReconciliationStatus, kept: ReconciliationStatus): boolean {
  if (current.completedAt === undefined || kept.completedAt === undefined) return false;
  return Date.parse(current.completedAt) >= Date.parse(kept.completedAt);
}

function notConfigured(current: ReconciliationStatus): ReconciliationStatus {
  if (current.state === 'NotConfigured') return current;
  return {
    ...current,
    state: 'NotConfigured',
    marker: false,
    message: `adopted; no session ledger is configured (--ledger-url), so the sandbox fails closed (was ${current.state})`,
  };
}

/** When the next legacy walk is due, for a sandbox still without its marker. */
export function nextLegacyWalkInMs(
  ctx: ReconcilerContext,
  status: ReconciliationStatus,
  deleting: boolean,
): number | undefined {
  if (status.marker || !ctx.legacy || !status.completedAt) return undefined;
  const spacing = deleting ? ctx.timing.legacyRetryWhileDeletingMs : ctx.timing.legacyRetryMs;
  return Math.max(0, Date.parse(status.completedAt) + spacing - ctx.now().getTime());
}
