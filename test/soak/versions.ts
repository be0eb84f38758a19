/**
 * Every version of every Sandbox the API server answered a write with (the audit log records Sandbox writes,
 * their status included, with the response body): its annotations, whether it is being deleted, and its
 * status. From them, per name: when an administrator's erase request was pending (from the version that
 * first shows it not yet recorded, to the status write that records it), when automatic cleanup's fence was
 * up, and the decisions recorded. Pure.
 */
import { ANNOTATIONS } from '../../operator/api/names.ts';
import type { TimedEvent } from './audit-log.ts';

export type SandboxVersion = {
  /** When the API server received the write that produced it: it cannot have been stored before. */
  readonly received: number;
  /** When the API server completed that write: it was stored by then. */
  readonly at: number;
  /** Its place in the store's history (etcd's revision): two writes' completions may come out of order. */
  readonly revision: number;
  readonly uid: string;
  readonly annotations: Readonly<Record<string, string>>;
  /** Its labels (issue 28: a pool's and a sandbox claim's, which say whether a pool may delete it). */
  readonly labels?: Readonly<Record<string, string>>;
  readonly finalizers: readonly string[];
  readonly deleting: boolean;
  /** spec.operatingMode as stored (the CRD defaults it to Running). */
  readonly operatingMode: string | undefined;
  readonly status: RecordedStatus | undefined;
  /**
   * When the status it shows was stored at the latest: the API server stamps a manager's managedFields entry
   * (second precision) at every status write that changes a field, so the newest `status` entry, plus the
   * second it was truncated to, bounds every status write before it — one answered 5xx yet stored included.
   */
  readonly statusStoredBy: number;
};

export type RecordedStatus = {
  readonly decision?: {
    readonly verdict?: string;
    readonly reason?: string;
    readonly blockingReferences?: readonly string[];
    readonly decidedAt?: string;
  };
  readonly capacity?: { readonly erasedFor?: string };
  readonly reconciliation?: { readonly state?: string; readonly marker?: boolean };
};

type RawSandbox = {
  kind?: string;
  metadata?: {
    name?: string;
    uid?: string;
    resourceVersion?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    managedFields?: { subresource?: string; time?: string }[];
  };
  spec?: { operatingMode?: string };
  status?: RecordedStatus;
};

const WRITES = new Set(['create', 'update', 'patch', 'delete']);

/** The versions of each Sandbox name (all incarnations), in the order the store holds them. */
export function sandboxVersions(sorted: readonly TimedEvent[]): Map<string, SandboxVersion[]> {
  const byName = new Map<string, SandboxVersion[]>();
  for (const e of sorted) {
    if (e.objectRef?.resource !== 'sandboxes' || !WRITES.has(e.verb)) continue;
    const code = e.responseStatus?.code ?? 0;
    const object = e.responseObject as RawSandbox | undefined;
    const name = object?.metadata?.name;
    const uid = object?.metadata?.uid;
    if (code < 200 || code >= 300 || object?.kind !== 'Sandbox' || name === undefined || uid === undefined)
      continue;
    const list = byName.get(name) ?? [];
    list.push({
      received: e.received,
      at: e.completed,
      revision: Number(object.metadata?.resourceVersion ?? Number.NaN),
      uid,
      annotations: object.metadata?.annotations ?? {},
      labels: object.metadata?.labels ?? {},
      finalizers: object.metadata?.finalizers ?? [],
      deleting: object.metadata?.deletionTimestamp !== undefined,
      operatingMode: object.spec?.operatingMode,
      status: object.status,
      statusStoredBy: statusStoredBy(object.metadata?.managedFields ?? []),
    });
    byName.set(name, list);
  }
  for (const list of byName.values()) list.sort((a, b) => a.revision - b.revision || a.at - b.at);
  return byName;
}

const SECOND_MS = 1000;

function statusStoredBy(entries: readonly { subresource?: string; time?: string }[]): number {
  const times = entries
    .filter((entry) => entry.subresource === 'status')
    .map((entry) => Date.parse(entry.time ?? ''))
    .filter((time) => Number.isFinite(time));
  return times.length === 0 ? Number.POSITIVE_INFINITY : Math.max(...times) + SECOND_MS;
}

export type Window = { readonly from: number; readonly to: number };

export const within = (windows: readonly Window[], t: number) => windows.some((w) => w.from < t && t < w.to);

/**
 * When the operator may act on an erase request (lifecycle.ts `pendingErase`): a value of the annotation that
 * a version with a status shows and the status has not recorded. Its window opens when that version's write
 * was received and closes when the status write that records it was received (the erase's deletes come before
 * that write, in the same turn), or one that records a request made after it. A value carried before the
 * first status write is inherited (the first status write records it): never pending, so never a window.
 */
export function eraseWindows(versions: readonly SandboxVersion[]): Window[] {
  const windows: Window[] = [];
  for (const uid of new Set(versions.map((v) => v.uid))) {
    const open: { value: string; from: number }[] = [];
    for (const v of versions.filter((each) => each.uid === uid)) {
      const asked = v.annotations[ANNOTATIONS.eraseReferences];
      const done = v.status?.capacity?.erasedFor;
      const pending = v.status !== undefined && asked !== undefined && asked !== done;
      if (pending && !open.some((o) => o.value === asked)) open.push({ value: asked, from: v.received });
      const recorded = open.findIndex((o) => o.value === done);
      for (const closed of open.splice(0, recorded + 1)) windows.push({ from: closed.from, to: v.received });
    }
    for (const still of open) windows.push({ from: still.from, to: Number.POSITIVE_INFINITY });
  }
  return windows;
}

/**
 * Whether automatic cleanup's fence (the cleanup-fence annotation) certainly stood throughout [from, to]: the
 * last version stored before `from` has it, no later version without it was even received by `to`, and no
 * write that may have lifted it was answered 5xx by then (`liftsInDoubt`).
 */
export function fencedThroughout(
  versions: readonly SandboxVersion[],
  from: number,
  to: number,
  liftsInDoubt: readonly LiftInDoubt[] = [],
): boolean {
  const fenceOf = (v: SandboxVersion) => v.annotations[ANNOTATIONS.cleanupFence];
  const before = versions.findLastIndex((v) => v.at < from);
  const standing = before < 0 ? undefined : fenceOf(versions[before]!);
  if (standing === undefined) return false;
  if (liftsInDoubt.some((lift) => lift.received <= to && (lift.tested ?? standing) === standing))
    return false;
  return versions.every((v, i) => i <= before || v.received > to || fenceOf(v) !== undefined);
}

/**
 * A write of a Sandbox's metadata that removes the cleanup fence, answered 5xx: the API server may have stored it
 * all the same (its client went away, a 504 "context canceled"), and the audit log records no version for it.
 * `tested`: the fence value its JSON Patch tests, when it tests one (it lifts only that fence).
 */
export type LiftInDoubt = { readonly received: number; readonly tested?: string };

/** The fence lifts answered 5xx, per Sandbox name. */
export function liftsInDoubt(sorted: readonly TimedEvent[]): Map<string, LiftInDoubt[]> {
  const byName = new Map<string, LiftInDoubt[]>();
  for (const e of sorted) {
    const ref = e.objectRef;
    if (ref?.resource !== 'sandboxes' || ref.subresource !== undefined || ref.name === undefined) continue;
    if ((e.responseStatus?.code ?? 0) < 500 || (e.verb !== 'patch' && e.verb !== 'update')) continue;
    const lift = fenceLiftOf(e.requestObject, e.verb === 'update');
    if (lift === undefined) continue;
    byName.set(ref.name, [...(byName.get(ref.name) ?? []), { received: e.received, ...lift }]);
  }
  return byName;
}

const FENCE_POINTER = `/metadata/annotations/${ANNOTATIONS.cleanupFence.replaceAll('~', '~0').replaceAll('/', '~1')}`;
type PatchOp = { readonly op?: unknown; readonly path?: unknown; readonly value?: unknown };

/** Whether a write's body may remove the fence, and the value it tests; undefined when it cannot remove it. */
function fenceLiftOf(body: unknown, replaces: boolean): { tested?: string } | undefined {
  if (Array.isArray(body)) {
    const ops = body as readonly PatchOp[];
    const removes = ops.some(
      (o) =>
        (o.op === 'remove' || o.op === 'replace') &&
        (o.path === FENCE_POINTER || o.path === '/metadata/annotations' || o.path === '/metadata'),
    );
    if (!removes) return undefined;
    const test = ops.find((o) => o.op === 'test' && o.path === FENCE_POINTER);
    return typeof test?.value === 'string' ? { tested: test.value } : {};
  }
  // A merge patch that sets it (or all annotations) to null, or an update of a whole object without it.
  const metadata = (body as { metadata?: { annotations?: Record<string, unknown> | null } } | undefined)
    ?.metadata;
  if (metadata?.annotations === undefined) return undefined;
  const fence = metadata.annotations === null ? null : metadata.annotations[ANNOTATIONS.cleanupFence];
  return fence === null || (replaces && fence === undefined) ? {} : undefined;
}

/**
 * Versions that show the legacy marker on an incarnation a version before recorded unmarked (adopted): with no
 * session ledger (the soak configures none) no walk completes, so nothing may earn it.
 */
export function unwalkedMarkers(versions: readonly SandboxVersion[]): SandboxVersion[] {
  const unmarked = new Set<string>();
  const marked: SandboxVersion[] = [];
  for (const v of versions) {
    const marker = v.status?.reconciliation?.marker;
    if (marker === false) unmarked.add(v.uid);
    else if (marker === true && unmarked.has(v.uid)) marked.push(v);
  }
  return marked;
}

/** Versions of an incarnation whose recorded decision went back on an Exclusive one recorded before. */
export function undoneDecisions(versions: readonly SandboxVersion[]): SandboxVersion[] {
  const exclusive = new Set<string>();
  const undone: SandboxVersion[] = [];
  for (const v of versions) {
    const verdict = v.status?.decision?.verdict;
    if (verdict === 'Exclusive') exclusive.add(v.uid);
    else if (verdict !== undefined && exclusive.has(v.uid)) undone.push(v);
  }
  return undone;
}
