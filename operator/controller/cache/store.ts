/**
 * The controller's cache: Sandboxes (their state, no template: objects.ts `SandboxState`), SessionReferences
 * indexed by the sandbox they name, and sandbox pods indexed by their sandbox label. Watchers write;
 * reconcilers read through `StoreReader`.
 *
 * Caveat: the cache can be stale. A hit (a reference is present) may keep a sandbox; a miss never releases one
 * by itself — the deletion path confirms it with a consistent LIST first.
 */
import type { MalformedObjectError, Parsed } from '../../api/parse.ts';
import type { SandboxState } from '../../api/objects.ts';
import type { ReferenceEntry } from '../../exclusivity/reference.ts';
import type { ReferenceState } from '../../api/session-reference.ts';
import type { BudgetSummary } from './budget-summary.ts';
import type { PodSummary } from './pod-summary.ts';
import type { WatchEventType, WatchSink } from '../../runtime/watcher.ts';
import {
  decodeBudget,
  decodePod,
  decodeReference,
  decodeSandbox,
  keyOf,
  namespaceOf,
  SharedStrings,
  type Decoded,
  type ReferenceRecord,
} from './store-records.ts';

export { keyOf } from './store-records.ts';

export type ReferenceNotice = { readonly state: ReferenceState; readonly notice: string | undefined };

export interface StoreReader {
  sandbox(key: string): Parsed<SandboxState> | undefined;
  sandboxKeys(): string[];
  references(sandboxKey: string): ReferenceEntry[];
  /** Malformed references that name this sandbox, or whose sandbox cannot be read (fail closed). */
  unreadableReferences(sandboxKey: string): MalformedObjectError[];
  /** Its Attached references whose session has a turn Running (a drain's Reschedule waits for them). */
  runningTurns(sandboxKey: string): number;
  /** Its readable references' states and the drain notices they carry (noticeKey), for disruption-notice.ts. */
  referenceNotices(sandboxKey: string): ReferenceNotice[];
  pods(sandboxKey: string): PodSummary[];
  /** The sandbox's eviction guard as last seen; undefined when it is missing. */
  budget(sandboxKey: string): BudgetSummary | undefined;
}

/**
 * Called with the sandbox keys an event may change, so they are reconciled. `finishing`: a sandbox pod is
 * gone, which is what a released deletion waits for; its turn finishes the deletion, so it goes first.
 */
export type Enqueue = (sandboxKeys: Iterable<string>, finishing?: boolean) => void;

export class ClusterStore implements StoreReader {
  private readonly strings = new SharedStrings();
  private readonly sandboxes = new Map<string, Parsed<SandboxState>>();
  private readonly referenceRecords = new Map<string, ReferenceRecord>();
  private readonly referencesBySandbox = new Map<string, Map<string, ReferenceRecord>>();
  private readonly unattributed = new Map<string, Map<string, MalformedObjectError>>();
  private readonly podRecords = new Map<string, PodSummary>();
  private readonly podsBySandbox = new Map<string, Map<string, PodSummary>>();
  /** Budgets by their own key, and the sandbox key each guards. */
  private readonly budgetRecords = new Map<string, BudgetSummary>();
  private readonly budgetsBySandbox = new Map<string, BudgetSummary>();

  constructor(private readonly enqueue: Enqueue) {}

  readonly sandboxSink = this.sink(
    this.sandboxes,
    decodeSandbox,
    (item) => this.putSandbox(item),
    (key) => this.dropSandbox(key),
  );
  readonly referenceSink = this.sink(
    this.referenceRecords,
    decodeReference,
    (item) => this.putReference(item),
    (key) => this.dropReference(key),
  );
  /** A pod's DELETED event is finishing work: a released deletion waits for it. */
  readonly podSink = this.sink(
    this.podRecords,
    decodePod,
    (item) => this.putPod(item),
    (key) => this.dropPod(key),
    true,
  );
  readonly budgetSink = this.sink(
    this.budgetRecords,
    decodeBudget,
    (item) => this.putBudget(item),
    (key) => this.dropBudget(key),
  );

  sandbox(key: string): Parsed<SandboxState> | undefined {
    return this.sandboxes.get(key);
  }
  sandboxKeys(): string[] {
    return [...this.sandboxes.keys()];
  }
  references(sandboxKey: string): ReferenceEntry[] {
    const records = this.referencesBySandbox.get(sandboxKey)?.values() ?? [];
    return [...records].flatMap((record) => (record.entry ? [record.entry] : []));
  }
  unreadableReferences(sandboxKey: string): MalformedObjectError[] {
    const named = [...(this.referencesBySandbox.get(sandboxKey)?.values() ?? [])].flatMap((r) =>
      r.error ? [r.error] : [],
    );
    return [...named, ...(this.unattributed.get(namespaceOf(sandboxKey))?.values() ?? [])];
  }
  runningTurns(sandboxKey: string): number {
    let running = 0;
    for (const record of this.referencesBySandbox.get(sandboxKey)?.values() ?? [])
      if (record.turnRunning) running += 1;
    return running;
  }
  referenceNotices(sandboxKey: string): ReferenceNotice[] {
    return [...(this.referencesBySandbox.get(sandboxKey)?.values() ?? [])].flatMap((record) =>
      record.entry ? [{ state: record.entry.state, notice: record.notice }] : [],
    );
  }
  pods(sandboxKey: string): PodSummary[] {
    return [...(this.podsBySandbox.get(sandboxKey)?.values() ?? [])];
  }
  budget(sandboxKey: string): BudgetSummary | undefined {
    return this.budgetsBySandbox.get(sandboxKey);
  }
  get counts(): { sandboxes: number; references: number; pods: number } {
    return {
      sandboxes: this.sandboxes.size,
      references: this.referenceRecords.size,
      pods: this.podRecords.size,
    };
  }

  /** A watcher's sink for one kind: objects decoded as they arrive; keyless ones (undefined) are ignored. */
  private sink<T>(
    current: ReadonlyMap<string, unknown>,
    decode: (raw: unknown, strings: SharedStrings) => Decoded<T> | undefined,
    put: (item: Decoded<T>) => string[],
    drop: (key: string) => string[],
    finishingOnDelete = false,
  ): WatchSink<Decoded<T> | undefined> {
    return {
      decode: (raw) => decode(raw, this.strings),
      replace: (items) => {
        const seen = new Set<string>();
        const touched: string[] = [];
        for (const item of items) {
          if (item === undefined) continue;
          seen.add(item.key);
          touched.push(...put(item));
        }
        for (const key of [...current.keys()]) if (!seen.has(key)) touched.push(...drop(key));
        this.enqueue(new Set(touched));
      },
      apply: (type: WatchEventType, item) => {
        if (item === undefined) return;
        const deleted = type === 'DELETED';
        this.enqueue(deleted ? drop(item.key) : put(item), finishingOnDelete && deleted);
      },
    };
  }

  private putSandbox({ key, value }: Decoded<Parsed<SandboxState>>): string[] {
    this.sandboxes.set(key, value);
    return [key];
  }
  private dropSandbox(key: string): string[] {
    this.sandboxes.delete(key);
    return [key];
  }

  private putReference({ key, value: record }: Decoded<ReferenceRecord>): string[] {
    const before = this.dropReference(key);
    this.referenceRecords.set(key, record);
    const { sandboxKey } = record;
    if (sandboxKey !== undefined) {
      const bucket = this.referencesBySandbox.get(sandboxKey) ?? new Map<string, ReferenceRecord>();
      bucket.set(key, record);
      this.referencesBySandbox.set(sandboxKey, bucket);
      return [...before, sandboxKey];
    }
    // A malformed reference whose sandbox cannot be read blocks every sandbox of its namespace.
    const namespace = namespaceOf(key);
    const bucket = this.unattributed.get(namespace) ?? new Map<string, MalformedObjectError>();
    if (record.error) bucket.set(key, record.error);
    this.unattributed.set(namespace, bucket);
    return [...before, ...this.sandboxKeysIn(namespace)];
  }
  private dropReference(key: string): string[] {
    const record = this.referenceRecords.get(key);
    if (!record) return [];
    this.referenceRecords.delete(key);
    if (record.sandboxKey === undefined) {
      const namespace = namespaceOf(key);
      this.unattributed.get(namespace)?.delete(key);
      return this.sandboxKeysIn(namespace);
    }
    const bucket = this.referencesBySandbox.get(record.sandboxKey);
    bucket?.delete(key);
    if (bucket?.size === 0) this.referencesBySandbox.delete(record.sandboxKey);
    return [record.sandboxKey];
  }

  private putPod({ key, value: pod }: Decoded<PodSummary | undefined>): string[] {
    const before = this.dropPod(key);
    if (!pod) return before;
    const sandboxKey = keyOf(pod.namespace, pod.sandbox);
    this.podRecords.set(key, pod);
    const bucket = this.podsBySandbox.get(sandboxKey) ?? new Map<string, PodSummary>();
    bucket.set(key, pod);
    this.podsBySandbox.set(sandboxKey, bucket);
    return [...before, sandboxKey];
  }
  private dropPod(key: string): string[] {
    const pod = this.podRecords.get(key);
    if (!pod) return [];
    this.podRecords.delete(key);
    const sandboxKey = keyOf(pod.namespace, pod.sandbox);
    const bucket = this.podsBySandbox.get(sandboxKey);
    bucket?.delete(key);
    if (bucket?.size === 0) this.podsBySandbox.delete(sandboxKey);
    return [sandboxKey];
  }

  private putBudget({ key, value: budget }: Decoded<BudgetSummary | undefined>): string[] {
    const before = this.dropBudget(key);
    if (!budget) return before;
    this.budgetRecords.set(key, budget);
    const sandboxKey = keyOf(budget.namespace, budget.sandbox);
    this.budgetsBySandbox.set(sandboxKey, budget);
    return [...before, sandboxKey];
  }
  private dropBudget(key: string): string[] {
    const budget = this.budgetRecords.get(key);
    if (!budget) return [];
    this.budgetRecords.delete(key);
    const sandboxKey = keyOf(budget.namespace, budget.sandbox);
    this.budgetsBySandbox.delete(sandboxKey);
    return [sandboxKey];
  }

  private sandboxKeysIn(namespace: string): string[] {
    return this.sandboxKeys().filter((key) => namespaceOf(key) === namespace);
  }
}
