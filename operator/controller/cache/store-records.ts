/**
 * What the store keeps of each watched object, decoded as the object arrives (the watcher calls `decode` per
 * LIST item and per event), so neither a LIST's pages nor an event's raw object outlive their arrival: a
 * Sandbox as its state (parsed, then without its template and others' metadata), a reference as its index
 * entry, a pod and a guard as their summaries. Strings that repeat across objects (namespaces, sandbox keys,
 * worktrees, states) are shared, not kept once per object as JSON.parse makes them.
 */
import {
  parseSandbox,
  parseSessionReference,
  type MalformedObjectError,
  type Parsed,
} from '../../api/parse.ts';
import { GROUP, LABELS } from '../../api/names.ts';
import type { Sandbox, SandboxState } from '../../api/objects.ts';
import { referenceEntryOf, type ReferenceEntry } from '../../exclusivity/reference.ts';
import { budgetSummaryOf, type BudgetSummary } from './budget-summary.ts';
import { podSummaryOf, type PodSummary } from './pod-summary.ts';

export const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;
export const namespaceOf = (key: string) => key.slice(0, key.indexOf('/'));

/**
 * One copy of each repeated string. Bounded: once full it starts over, so names of objects long gone are not
 * kept for ever (strings already shared stay shared; new ones are shared from then on).
 */
export class SharedStrings {
  private readonly pool = new Map<string, string>();
  constructor(private readonly max = 65_536) {}

  share(value: string): string;
  share(value: string | undefined): string | undefined;
  share(value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    const known = this.pool.get(value);
    if (known !== undefined) return known;
    if (this.pool.size >= this.max) this.pool.clear();
    this.pool.set(value, value);
    return value;
  }
}

/** An object as the store keeps it; `key` is `namespace/name`. */
export type Decoded<T> = { readonly key: string; readonly value: T };

export type ReferenceRecord = {
  /** Undefined when the reference's sandbox cannot be read: it then holds every sandbox of its namespace. */
  readonly sandboxKey: string | undefined;
  readonly entry?: ReferenceEntry;
  /** An Attached reference whose session's latest turn is Running: a drain holds its sandbox's move for it. */
  readonly turnRunning?: true;
  readonly error?: MalformedObjectError;
};

type RawMeta = { metadata?: { name?: unknown; namespace?: unknown }; spec?: { sandbox?: unknown } };

/** The object's key, or undefined when it has no name and namespace (it is then ignored). */
function rawKey(raw: unknown, strings: SharedStrings): string | undefined {
  const meta = (raw as RawMeta | null)?.metadata;
  return typeof meta?.name === 'string' && typeof meta.namespace === 'string'
    ? keyOf(strings.share(meta.namespace), meta.name)
    : undefined;
}

/**
 * A Sandbox parsed whole (a malformed template still makes it malformed: fail closed), kept as its state
 * (objects.ts, `SandboxState`): the template, the labels but the warm pools' and the annotations not the
 * operator's own are dropped.
 */
export function decodeSandbox(
  raw: unknown,
  strings: SharedStrings,
): Decoded<Parsed<SandboxState>> | undefined {
  const key = rawKey(raw, strings);
  if (key === undefined) return undefined;
  const parsed = parseSandbox(raw);
  return { key, value: parsed.ok ? { ok: true, value: stateOf(parsed.value, strings) } : parsed };
}

const OWN_ANNOTATION = `${GROUP}/`;
const POOL_LABELS: readonly string[] = [LABELS.warmPool, LABELS.sandboxClaim];

function ownLabels(labels: Record<string, string>): Record<string, string> | undefined {
  const kept = Object.entries(labels).filter(([name]) => POOL_LABELS.includes(name));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

function stateOf(sandbox: Sandbox, strings: SharedStrings): SandboxState {
  const { podTemplate: _template, ...spec } = sandbox.spec;
  const { labels, annotations, ...metadata } = sandbox.metadata;
  // An empty map stays a map: the cleanup fence's patch adds to it, or adds it when there is none.
  const own =
    annotations &&
    Object.fromEntries(Object.entries(annotations).filter(([name]) => name.startsWith(OWN_ANNOTATION)));
  // Of the labels, only the warm pools' (the live turn's pool exemption, pool-exemption.ts reads them).
  const pool = labels && ownLabels(labels);
  return {
    ...sandbox,
    metadata: {
      ...metadata,
      namespace: strings.share(metadata.namespace),
      ...(pool ? { labels: pool } : {}),
      ...(own ? { annotations: own } : {}),
    },
    spec: { ...spec, worktree: strings.share(spec.worktree) },
  };
}

export function decodeReference(raw: unknown, strings: SharedStrings): Decoded<ReferenceRecord> | undefined {
  const key = rawKey(raw, strings);
  if (key === undefined) return undefined;
  const parsed = parseSessionReference(raw);
  if (!parsed.ok) {
    const named = (raw as RawMeta).spec?.sandbox;
    const sandboxKey = typeof named === 'string' ? strings.share(keyOf(namespaceOf(key), named)) : undefined;
    return { key, value: { sandboxKey, error: parsed.error } };
  }
  const entry = referenceEntryOf(parsed.value);
  const { metadata, spec, status } = parsed.value;
  const turnRunning = spec.state === 'Attached' && status?.turn?.phase === 'Running';
  return {
    key,
    value: {
      sandboxKey: strings.share(keyOf(metadata.namespace, spec.sandbox)),
      ...(turnRunning ? { turnRunning } : {}),
      entry: {
        ...entry,
        worktree: strings.share(entry.worktree),
        state: strings.share(entry.state) as ReferenceEntry['state'],
        role: strings.share(entry.role) as ReferenceEntry['role'],
      },
    },
  };
}

/** `value` undefined: not a sandbox pod (any earlier record of that key goes). */
export function decodePod(raw: unknown, strings: SharedStrings): Decoded<PodSummary | undefined> | undefined {
  const key = rawKey(raw, strings);
  if (key === undefined) return undefined;
  const pod = podSummaryOf(raw);
  return {
    key,
    value: pod && {
      ...pod,
      namespace: strings.share(pod.namespace),
      sandbox: strings.share(pod.sandbox),
      finalizers: pod.finalizers.map((finalizer) => strings.share(finalizer)),
      phase: strings.share(pod.phase),
    },
  };
}

/** `value` undefined: not a sandbox's guard. */
export function decodeBudget(
  raw: unknown,
  strings: SharedStrings,
): Decoded<BudgetSummary | undefined> | undefined {
  const key = rawKey(raw, strings);
  if (key === undefined) return undefined;
  const budget = budgetSummaryOf(raw);
  return {
    key,
    value: budget && {
      ...budget,
      namespace: strings.share(budget.namespace),
      sandbox: strings.share(budget.sandbox),
    },
  };
}
