/**
 * The warm pools' cache (docs/warm-pools.md): pools, templates and the sandboxes labelled with a pool, each
 * from its own watch, kept as small records. A template is kept by name and generation only (its blueprint,
 * a tenant's pod template, is read live when a sandbox is made, as the Sandbox store keeps none). Every change
 * enqueues the pools it concerns: a pool itself; a template, every pool of its namespace that names it; a
 * sandbox, the pool its label names.
 */
import { parseSandboxWarmPool, type Parsed } from '../../api/parse.ts';
import {
  ANNOTATIONS,
  API_VERSION,
  GROUP,
  LABELS,
  SANDBOX,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
  VERSION,
} from '../../api/names.ts';
import type { SandboxWarmPool } from '../../api/sandbox-warm-pool.ts';
import type { WatchEventType, WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import { keyOf } from './store-records.ts';

/** What the pool's turn reads of one of its sandboxes (warm-pool/plan.ts), and the pool it belongs to. */
export type PoolSandboxRecord = {
  readonly pool: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly ready: boolean;
  /** Carries the sandbox-claim label: bound to a SandboxClaim, no longer the pool's. */
  readonly claimed: boolean;
  /** Has a deletionTimestamp: on its way out, whatever the pool does. */
  readonly deleting: boolean;
  /** The template label and template-generation annotation it was made with. */
  readonly template: string | undefined;
  readonly templateGeneration: string | undefined;
  readonly createdAt: string | undefined;
};

export type TemplateRecord = { readonly name: string; readonly generation: number };

type Meta = {
  name?: unknown;
  namespace?: unknown;
  uid?: unknown;
  resourceVersion?: unknown;
  generation?: unknown;
  creationTimestamp?: unknown;
  deletionTimestamp?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
};
type Raw = { metadata?: Meta; status?: { conditions?: unknown } } | null | undefined;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function readyOf(conditions: unknown): boolean {
  if (!Array.isArray(conditions)) return false;
  return conditions.some(
    (condition: { type?: unknown; status?: unknown } | null) =>
      condition?.type === 'Ready' && condition.status === 'True',
  );
}

/** A pool's sandbox as the turn reads it; undefined for an object without a name or pool label. */
export function poolSandboxOf(raw: unknown): { key: string; record: PoolSandboxRecord } | undefined {
  const metadata = (raw as Raw)?.metadata;
  const namespace = text(metadata?.namespace);
  const name = text(metadata?.name);
  const pool = text(metadata?.labels?.[LABELS.warmPool]);
  if (namespace === undefined || name === undefined || pool === undefined) return undefined;
  return {
    key: keyOf(namespace, name),
    record: {
      pool: keyOf(namespace, pool),
      name,
      uid: text(metadata?.uid) ?? '',
      resourceVersion: text(metadata?.resourceVersion) ?? '',
      ready: readyOf((raw as Raw)?.status?.conditions),
      claimed: metadata?.labels?.[LABELS.sandboxClaim] !== undefined,
      deleting: metadata?.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null,
      template: text(metadata?.labels?.[LABELS.template]),
      templateGeneration: text(metadata?.annotations?.[ANNOTATIONS.templateGeneration]),
      createdAt: text(metadata?.creationTimestamp),
    },
  };
}

const collection = (watchNamespace: string | undefined, plural: string) =>
  `/apis/${GROUP}/${VERSION}${watchNamespace === undefined ? '' : `/namespaces/${watchNamespace}`}/${plural}`;

/** The three watches, by what they fill. */
export function warmPoolResources(watchNamespace: string | undefined): {
  pools: WatchedResource;
  templates: WatchedResource;
  sandboxes: WatchedResource;
} {
  const ns = watchNamespace === undefined ? {} : { namespace: watchNamespace };
  return {
    pools: {
      name: SANDBOX_WARM_POOL.plural,
      apiVersion: API_VERSION,
      kind: SANDBOX_WARM_POOL.kind,
      path: collection(watchNamespace, SANDBOX_WARM_POOL.plural),
      ...ns,
    },
    templates: {
      name: SANDBOX_TEMPLATE.plural,
      apiVersion: API_VERSION,
      kind: SANDBOX_TEMPLATE.kind,
      path: collection(watchNamespace, SANDBOX_TEMPLATE.plural),
      ...ns,
    },
    sandboxes: {
      // A second watch of Sandboxes, of the pool-labelled ones only: the Sandbox store keeps no labels.
      name: `${SANDBOX.plural} (warm pools)`,
      apiVersion: API_VERSION,
      kind: SANDBOX.kind,
      path: collection(watchNamespace, SANDBOX.plural),
      labelSelector: LABELS.warmPool,
      ...ns,
    },
  };
}

/** A keyed map filled by a watch: `replace` after a LIST, `apply` per event; each change is reported. */
class Records<T> implements WatchSink {
  readonly items = new Map<string, T>();

  constructor(
    private readonly read: (raw: unknown) => { key: string; record: T } | undefined,
    private readonly changed: (record: T) => void,
  ) {}

  replace(items: readonly unknown[]): void {
    const before = [...this.items.values()];
    this.items.clear();
    for (const item of items) {
      const read = this.read(item);
      if (read) this.items.set(read.key, read.record);
    }
    for (const record of [...before, ...this.items.values()]) this.changed(record);
  }

  apply(type: WatchEventType, object: unknown): void {
    const read = this.read(object);
    if (!read) return;
    const before = this.items.get(read.key);
    if (type === 'DELETED') this.items.delete(read.key);
    else this.items.set(read.key, read.record);
    if (before !== undefined) this.changed(before);
    this.changed(read.record);
  }
}

export type PoolRecord = {
  readonly key: string;
  readonly namespace: string;
  readonly parsed: Parsed<SandboxWarmPool>;
};

function poolOf(raw: unknown): { key: string; record: PoolRecord } | undefined {
  const metadata = (raw as Raw)?.metadata;
  const namespace = text(metadata?.namespace);
  const name = text(metadata?.name);
  if (namespace === undefined || name === undefined) return undefined;
  const key = keyOf(namespace, name);
  return { key, record: { key, namespace, parsed: parseSandboxWarmPool(raw) } };
}

function templateOf(
  raw: unknown,
): { key: string; record: TemplateRecord & { namespace: string } } | undefined {
  const metadata = (raw as Raw)?.metadata;
  const namespace = text(metadata?.namespace);
  const name = text(metadata?.name);
  if (namespace === undefined || name === undefined) return undefined;
  const generation = typeof metadata?.generation === 'number' ? metadata.generation : 0;
  return { key: keyOf(namespace, name), record: { namespace, name, generation } };
}

export class WarmPoolCache {
  readonly pools: Records<PoolRecord>;
  readonly templates: Records<TemplateRecord & { namespace: string }>;
  readonly sandboxes: Records<PoolSandboxRecord>;

  constructor(enqueue: (poolKey: string) => void) {
    this.pools = new Records(poolOf, (pool) => enqueue(pool.key));
    this.templates = new Records(templateOf, (template) => {
      for (const pool of this.poolsOfTemplate(template.namespace, template.name)) enqueue(pool);
    });
    this.sandboxes = new Records(poolSandboxOf, (sandbox) => enqueue(sandbox.pool));
  }

  pool(key: string): PoolRecord | undefined {
    return this.pools.items.get(key);
  }

  template(namespace: string, name: string): TemplateRecord | undefined {
    return this.templates.items.get(keyOf(namespace, name));
  }

  /** The sandboxes labelled with this pool (claimed ones too: the turn tells them apart). */
  sandboxesOf(poolKey: string): PoolSandboxRecord[] {
    return [...this.sandboxes.items.values()].filter((sandbox) => sandbox.pool === poolKey);
  }

  poolKeys(): string[] {
    return [...this.pools.items.keys()];
  }

  private poolsOfTemplate(namespace: string, template: string): string[] {
    return [...this.pools.items.values()]
      .filter(
        (pool) =>
          pool.namespace === namespace &&
          pool.parsed.ok &&
          pool.parsed.value.spec.templateRef.name === template,
      )
      .map((pool) => pool.key);
  }
}
