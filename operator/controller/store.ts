/**
 * The controller's cache: Sandboxes (parsed), SessionReferences indexed by the sandbox they name, and sandbox
 * pods indexed by their sandbox label. Watchers write; reconcilers read through `StoreReader`.
 *
 * Caveat: the cache can be stale. A hit (a reference is present) may keep a sandbox; a miss never releases one
 * by itself — the deletion path confirms it with a consistent LIST first.
 */
import { parseSandbox, parseSessionReference, type MalformedObjectError, type Parsed } from '../api/parse.ts';
import type { Sandbox } from '../api/objects.ts';
import { referenceEntryOf, type ReferenceEntry } from '../index/reference.ts';
import { budgetSummaryOf, type BudgetSummary } from './budget-summary.ts';
import { podSummaryOf, type PodSummary } from './pod-summary.ts';
import type { WatchEventType, WatchSink } from '../runtime/watcher.ts';

export const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

export interface StoreReader {
  sandbox(key: string): Parsed<Sandbox> | undefined;
  sandboxKeys(): string[];
  references(sandboxKey: string): ReferenceEntry[];
  /** Malformed references that name this sandbox, or whose sandbox cannot be read (fail closed). */
  unreadableReferences(sandboxKey: string): MalformedObjectError[];
  pods(sandboxKey: string): PodSummary[];
  /** The sandbox's eviction guard as last seen; undefined when it is missing. */
  budget(sandboxKey: string): BudgetSummary | undefined;
}

type RawMeta = { metadata?: { name?: unknown; namespace?: unknown }; spec?: { sandbox?: unknown } };
const rawKey = (raw: unknown): string | undefined => {
  const meta = (raw as RawMeta | null)?.metadata;
  return typeof meta?.name === 'string' && typeof meta.namespace === 'string'
    ? keyOf(meta.namespace, meta.name)
    : undefined;
};
const namespaceOf = (key: string) => key.slice(0, key.indexOf('/'));

/**
 * Called with the sandbox keys an event may change, so they are reconciled. `finishing`: a sandbox pod is
 * gone, which is what a released deletion waits for; its turn finishes the deletion, so it goes first.
 */
export type Enqueue = (sandboxKeys: Iterable<string>, finishing?: boolean) => void;

type ReferenceRecord = {
  sandboxKey: string | undefined;
  entry?: ReferenceEntry;
  error?: MalformedObjectError;
};

export class ClusterStore implements StoreReader {
  private readonly sandboxes = new Map<string, Parsed<Sandbox>>();
  private readonly referenceRecords = new Map<string, ReferenceRecord>();
  private readonly referencesBySandbox = new Map<string, Map<string, ReferenceRecord>>();
  private readonly unattributed = new Map<string, Map<string, MalformedObjectError>>();
  private readonly podRecords = new Map<string, PodSummary>();
  private readonly podsBySandbox = new Map<string, Map<string, PodSummary>>();
  /** Budgets by their own key, and the sandbox key each guards. */
  private readonly budgetRecords = new Map<string, BudgetSummary>();
  private readonly budgetsBySandbox = new Map<string, BudgetSummary>();

  constructor(private readonly enqueue: Enqueue) {}

  readonly sandboxSink: WatchSink = {
    replace: (items) =>
      this.replaceAll(
        this.sandboxes,
        items,
        (raw) => this.putSandbox(raw),
        (key) => this.dropSandbox(key),
      ),
    apply: (type, raw) =>
      this.applyEvent(
        type,
        raw,
        (r) => this.putSandbox(r),
        (key) => this.dropSandbox(key),
      ),
  };
  readonly referenceSink: WatchSink = {
    replace: (items) =>
      this.replaceAll(
        this.referenceRecords,
        items,
        (raw) => this.putReference(raw),
        (key) => this.dropReference(key),
      ),
    apply: (type, raw) =>
      this.applyEvent(
        type,
        raw,
        (r) => this.putReference(r),
        (key) => this.dropReference(key),
      ),
  };
  readonly podSink: WatchSink = {
    replace: (items) =>
      this.replaceAll(
        this.podRecords,
        items,
        (raw) => this.putPod(raw),
        (key) => this.dropPod(key),
      ),
    apply: (type, raw) =>
      this.applyEvent(
        type,
        raw,
        (r) => this.putPod(r),
        (key) => this.dropPod(key),
        type === 'DELETED',
      ),
  };

  readonly budgetSink: WatchSink = {
    replace: (items) =>
      this.replaceAll(
        this.budgetRecords,
        items,
        (raw) => this.putBudget(raw),
        (key) => this.dropBudget(key),
      ),
    apply: (type, raw) =>
      this.applyEvent(
        type,
        raw,
        (r) => this.putBudget(r),
        (key) => this.dropBudget(key),
      ),
  };

  sandbox(key: string): Parsed<Sandbox> | undefined {
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

  private applyEvent(
    type: WatchEventType,
    raw: unknown,
    put: (raw: unknown) => string[],
    drop: (key: string) => string[],
    finishing = false,
  ) {
    const key = rawKey(raw);
    if (key === undefined) return;
    this.enqueue(type === 'DELETED' ? drop(key) : put(raw), finishing);
  }

  private replaceAll<V>(
    current: Map<string, V>,
    items: readonly unknown[],
    put: (raw: unknown) => string[],
    drop: (key: string) => string[],
  ) {
    const seen = new Set<string>();
    const touched: string[] = [];
    for (const raw of items) {
      const key = rawKey(raw);
      if (key === undefined) continue;
      seen.add(key);
      touched.push(...put(raw));
    }
    for (const key of [...current.keys()]) if (!seen.has(key)) touched.push(...drop(key));
    this.enqueue(new Set(touched));
  }

  private putSandbox(raw: unknown): string[] {
    const key = rawKey(raw);
    if (key === undefined) return [];
    this.sandboxes.set(key, parseSandbox(raw));
    return [key];
  }
  private dropSandbox(key: string): string[] {
    this.sandboxes.delete(key);
    return [key];
  }

  private putReference(raw: unknown): string[] {
    const key = rawKey(raw);
    if (key === undefined) return [];
    const before = this.dropReference(key);
    const parsed = parseSessionReference(raw);
    const named = (raw as RawMeta).spec?.sandbox;
    const sandboxKey = parsed.ok
      ? keyOf(parsed.value.metadata.namespace, parsed.value.spec.sandbox)
      : typeof named === 'string'
        ? keyOf(namespaceOf(key), named)
        : undefined;
    const record: ReferenceRecord = parsed.ok
      ? { sandboxKey, entry: referenceEntryOf(parsed.value) }
      : { sandboxKey, error: parsed.error };
    this.referenceRecords.set(key, record);
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

  private putPod(raw: unknown): string[] {
    const key = rawKey(raw);
    if (key === undefined) return [];
    const before = this.dropPod(key);
    const pod = podSummaryOf(raw);
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

  private putBudget(raw: unknown): string[] {
    const key = rawKey(raw);
    if (key === undefined) return [];
    const before = this.dropBudget(key);
    const budget = budgetSummaryOf(raw);
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
