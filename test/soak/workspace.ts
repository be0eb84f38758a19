/**
 * Issue 27's judgements: the sandbox outlives its pods (docs/adr/0010). Pure.
 *
 * - A suspension lets the operator stop a live sandbox's pods: from the version that stores
 *   `spec.operatingMode: Suspended` until a version running again has been stored for SUSPEND_LAG_MS (the
 *   operator acts on its cache, which may show the suspension a moment after a resume). Nothing else of the
 *   sandbox may go; its references are judged as always (invariant 3).
 * - workspace-kept: a sandbox's workspace claim (`workspace-<sandbox>`) is deleted only once a decision of
 *   that sandbox recorded Exclusive, or once its namespace terminates — never by a suspension, a drain or a
 *   user's act.
 */
import type { TimedEvent } from './audit-log.ts';
import type { SandboxVersion } from './versions.ts';

/** How long after a resume was stored the operator may still act on the suspension its cache shows. */
export const SUSPEND_LAG_MS = 5_000;

/** Whether the operator may stop the sandbox's pods at `t` because its spec suspends it. */
export function suspendedAt(versions: readonly SandboxVersion[], t: number): boolean {
  const stored = versions.filter((v) => v.at < t);
  const last = stored.findLastIndex((v) => v.operatingMode === 'Suspended');
  if (last < 0) return false;
  const resumed = stored.slice(last + 1).find((v) => v.operatingMode !== 'Suspended');
  return resumed === undefined || t - resumed.at < SUSPEND_LAG_MS;
}

/** The claim template's name the soak's sandboxes use (users.ts, WORKSPACE_CLAIM). */
const CLAIM_PREFIX = 'workspace-';

export type WorkspaceLoss = { readonly claim: string; readonly sandbox: string; readonly event: TimedEvent };

/**
 * The deletions of workspace claims the API server accepted that no Exclusive verdict allowed: before the
 * namespace terminated, and before any version of the claim's sandbox recorded Exclusive.
 */
export function lostWorkspaces(
  sorted: readonly TimedEvent[],
  versions: ReadonlyMap<string, readonly SandboxVersion[]>,
  terminating: number,
): WorkspaceLoss[] {
  const losses: WorkspaceLoss[] = [];
  for (const e of sorted) {
    if (e.objectRef?.resource !== 'persistentvolumeclaims' || e.objectRef.subresource !== undefined) continue;
    if (e.verb !== 'delete' && e.verb !== 'deletecollection') continue;
    const code = e.responseStatus?.code ?? 0;
    if (code < 200 || code >= 300 || e.received >= terminating) continue;
    const claim = e.objectRef.name ?? '';
    if (!claim.startsWith(CLAIM_PREFIX)) continue;
    const sandbox = claim.slice(CLAIM_PREFIX.length);
    const decided = (versions.get(sandbox) ?? []).some(
      (v) => v.at < e.completed && v.status?.decision?.verdict === 'Exclusive',
    );
    if (!decided) losses.push({ claim, sandbox, event: e });
  }
  return losses;
}
