/**
 * Issue 27's judgements: the sandbox outlives its pods (docs/adr/0010). Pure.
 *
 * - A suspension lets the operator stop a live sandbox's pods: from the version that stores
 *   `spec.operatingMode: Suspended` until a version running again has been stored for SUSPEND_LAG_MS (the
 *   operator acts on its cache, which may show the suspension a moment after a resume). Nothing else of the
 *   sandbox may go; its references are judged as always (invariant 3).
 * - A drain lets the operator move a live sandbox's pod when its disruption policy is Reschedule (the soak's
 *   sandboxes with a workspace: the default then): a pod on a node cordoned from the drain's start until
 *   DRAIN_LAG_MS after its uncordon (the operator's cache shows the cordon a moment longer). A sandbox whose
 *   policy is Block never loses a pod to a drain.
 * - Idleness lets the operator stop a live sandbox's pods when `spec.idle` is set and no reference of it is
 *   certainly Attached: attached since ATTACH_LAG_MS after an attach returned (the operator's cache may
 *   still miss it before), until a detach, forget or erase of it began. The idle clock's length is not
 *   judged (an operator kill can hide a short attach from it); stopping a sandbox a session is attached to is.
 * - workspace-kept: a sandbox's workspace claim (`workspace-<sandbox>`) is deleted only once a decision of
 *   that sandbox recorded Exclusive, or once its namespace terminates — never by a suspension, a drain or a
 *   user's act.
 */
import type { TimedEvent } from './audit-log.ts';
import type { OpRecord } from './model.ts';
import type { SandboxVersion } from './versions.ts';

/** How long after a resume was stored the operator may still act on the suspension its cache shows. */
export const SUSPEND_LAG_MS = 5_000;

/** Whether the operator may stop the sandbox's pods at `t` because its spec suspends it. */
export function suspendedAt(versions: readonly SandboxVersion[], t: number): boolean {
  // From the write's arrival, not its answer: the operator acts on the watch event of the stored version, which
  // can come before the API server completes the answer (seed 20261327). Nothing unstored is ever seen.
  const stored = versions.filter((v) => v.received < t);
  const last = stored.findLastIndex((v) => v.operatingMode === 'Suspended');
  if (last < 0) return false;
  const resumed = stored.slice(last + 1).find((v) => v.operatingMode !== 'Suspended');
  return resumed === undefined || t - resumed.at < SUSPEND_LAG_MS;
}

/** How long after an uncordon was stored the operator may still move a pod off that node. */
export const DRAIN_LAG_MS = 5_000;

/** How long after an attach returned the operator's cache may still not hold its reference. */
export const ATTACH_LAG_MS = 5_000;

export type Window = { readonly from: number; readonly until: number };

type TimedOp = Pick<
  OpRecord,
  'kind' | 'startedAt' | 'endedAt' | 'outcome' | 'reference' | 'sandbox' | 'node'
>;

/** When each node was cordoned by a drain: from the drain's start to its end (the uncordon). */
export function drainWindows(ops: readonly TimedOp[]): ReadonlyMap<string, readonly Window[]> {
  const windows = new Map<string, Window[]>();
  for (const op of ops) {
    if (op.kind !== 'drain' || op.node === undefined) continue;
    const until = Number.isNaN(op.endedAt) ? Number.POSITIVE_INFINITY : op.endedAt;
    windows.set(op.node, [...(windows.get(op.node) ?? []), { from: op.startedAt, until }]);
  }
  return windows;
}

/** The node a deleted pod ran on, from the DELETE's answer (the pod as it was). */
export function nodeOfDeletedPod(e: TimedEvent): string | undefined {
  const pod = e.responseObject as { spec?: { nodeName?: unknown } } | undefined;
  return typeof pod?.spec?.nodeName === 'string' ? pod.spec.nodeName : undefined;
}

/** Whether the operator may move a pod off `node` at `t` because a drain cordoned it. */
export function drainedAt(windows: readonly Window[], t: number): boolean {
  return windows.some((w) => w.from <= t && t < w.until + DRAIN_LAG_MS);
}

/**
 * When a reference of `sandbox` was certainly Attached: from each successful attach's return until the next
 * detach, forget or erase that could have changed it began (a failed one too: its write may have landed).
 */
export function attachedWindows(ops: readonly TimedOp[], sandbox: string): Window[] {
  const closers = ops.filter(
    (op) => op.sandbox === sandbox && (op.kind === 'detach' || op.kind === 'forget' || op.kind === 'erase'),
  );
  return ops
    .filter((op) => op.kind === 'attach' && op.outcome === 'attached' && op.sandbox === sandbox)
    .map((op) => {
      const closed = closers
        .filter((c) => c.startedAt >= op.startedAt && (c.kind === 'erase' || c.reference === op.reference))
        .map((c) => c.startedAt);
      return { from: op.endedAt, until: Math.min(Number.POSITIVE_INFINITY, ...closed) };
    });
}

/** Whether the operator may stop the sandbox's pods at `t` as idle: no reference it must see Attached. */
export function idleAt(windows: readonly Window[], t: number): boolean {
  return !windows.some((w) => w.from + ATTACH_LAG_MS <= t && t < w.until);
}

/** The claim template's name the soak's sandboxes use (users.ts, WORKSPACE_CLAIM). */
const CLAIM_PREFIX = 'workspace-';

/**
 * When each revision was certainly stored: by the first completed answer that shows it or a later one. etcd's
 * revision is global, so an answer's resourceVersion proves every revision up to it committed. A version the
 * log knows only from a later answer (its own write answered with an error after it was stored, e.g. a 504
 * under load) is dated by the earliest such answer.
 */
export function storedBy(sorted: readonly TimedEvent[]): (revision: number) => number {
  const shown = sorted
    .flatMap((e) => {
      const code = e.responseStatus?.code ?? 0;
      const object = e.responseObject as { metadata?: { resourceVersion?: unknown } } | undefined;
      const revision = Number(object?.metadata?.resourceVersion);
      return code >= 200 && code < 300 && Number.isFinite(revision) ? [{ revision, at: e.completed }] : [];
    })
    .sort((a, b) => a.revision - b.revision);
  // The earliest answer at or after each position: a revision is stored by the earliest answer of any later one.
  const earliest = shown.map((s) => s.at);
  for (let i = earliest.length - 2; i >= 0; i--) earliest[i] = Math.min(earliest[i]!, earliest[i + 1]!);
  return (revision) => {
    const first = shown.findIndex((s) => s.revision >= revision);
    return first < 0 || Number.isNaN(revision) ? Number.POSITIVE_INFINITY : earliest[first]!;
  };
}

export type WorkspaceLoss = { readonly claim: string; readonly sandbox: string; readonly event: TimedEvent };

/**
 * The deletions of workspace claims the API server accepted that no Exclusive verdict allowed: before the
 * namespace terminated, and before any version of the claim's sandbox recorded Exclusive (stored by then:
 * `storedBy`, or the version's managedFields time of its status, `statusStoredBy`).
 */
export function lostWorkspaces(
  sorted: readonly TimedEvent[],
  versions: ReadonlyMap<string, readonly SandboxVersion[]>,
  terminating: number,
): WorkspaceLoss[] {
  const stored = storedBy(sorted);
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
      (v) =>
        Math.min(v.at, stored(v.revision), v.statusStoredBy) < e.completed &&
        v.status?.decision?.verdict === 'Exclusive',
    );
    if (!decided) losses.push({ claim, sandbox, event: e });
  }
  return losses;
}
