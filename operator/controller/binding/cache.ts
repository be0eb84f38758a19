/**
 * The binding's cache: SandboxClaims, SandboxWarmPools (their identity only), and the Sandboxes labelled with
 * a pool or a claim (two label-selected watches, so the binding never holds the other sandboxes). Watchers
 * write; the claim reconciler reads. A change of a claim, or of a sandbox bound to one, brings that claim's
 * turn; a pool that appears brings the turns of the unbound claims that name it (they waited for it).
 *
 * Like every cache it can be stale: it only suggests a candidate, and the binding's patch tests the version
 * it read, so a stale candidate costs a retry, never a double binding.
 */
import type { WatchEventType, WatchSink } from '../../runtime/watcher.ts';
import {
  bindingSandboxOf,
  claimRecordOf,
  poolRecordOf,
  type BindingSandbox,
  type ClaimRecord,
  type PoolRecord,
} from './records.ts';

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

export interface BindingCacheReader {
  claim(key: string): ClaimRecord | undefined;
  claimKeys(): string[];
  /** A sandbox bound to a claim or made by a pool, by namespace and name. */
  sandbox(namespace: string, name: string): BindingSandbox | undefined;
  /** The sandboxes the pool made (claimed or not), as last seen. */
  poolSandboxes(namespace: string, pool: string): BindingSandbox[];
  /** The pool as last seen; undefined when this cache has not seen it (yet). */
  pool(namespace: string, name: string): PoolRecord | undefined;
  /** When this replica first saw the claim (ms since the epoch): where its claim → Ready latency starts. */
  firstSeen(key: string): number | undefined;
}

type Keyed<T> = { readonly key: string; readonly value: T } | undefined;

export class BindingCache implements BindingCacheReader {
  private readonly claims = new Map<string, ClaimRecord>();
  private readonly seen = new Map<string, number>();
  private readonly claimed = new Map<string, BindingSandbox>();
  private readonly pooled = new Map<string, BindingSandbox>();
  private readonly byPool = new Map<string, Set<string>>();
  private readonly pools = new Map<string, PoolRecord>();

  constructor(
    /** Called with the claim keys an event may change. */
    private readonly enqueue: (claimKey: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  readonly claimSink: WatchSink<Keyed<ClaimRecord>> = this.sink(
    this.claims,
    claimRecordOf,
    (key, claim) => {
      this.claims.set(key, claim);
      if (!this.seen.has(key)) this.seen.set(key, this.now());
      return [key];
    },
    (key) => {
      this.claims.delete(key);
      this.seen.delete(key);
      return [];
    },
  );

  /** Sandboxes labelled `sandbox-claim`: a change may change their claim's Ready. */
  readonly claimedSandboxSink: WatchSink<Keyed<BindingSandbox>> = this.sink(
    this.claimed,
    bindingSandboxOf,
    (key, sandbox) => {
      this.claimed.set(key, sandbox);
      return claimKeysOf(sandbox);
    },
    (key) => {
      const gone = this.claimed.get(key);
      this.claimed.delete(key);
      return gone ? claimKeysOf(gone) : [];
    },
  );

  /** Sandboxes labelled `warm-pool`: the candidates. */
  readonly poolSandboxSink: WatchSink<Keyed<BindingSandbox>> = this.sink(
    this.pooled,
    bindingSandboxOf,
    (key, sandbox) => {
      this.unindex(key);
      this.pooled.set(key, sandbox);
      if (sandbox.pool !== undefined) {
        const poolKey = keyOf(sandbox.namespace, sandbox.pool);
        const keys = this.byPool.get(poolKey) ?? new Set<string>();
        keys.add(key);
        this.byPool.set(poolKey, keys);
      }
      return [];
    },
    (key) => {
      this.unindex(key);
      this.pooled.delete(key);
      return [];
    },
  );

  /** SandboxWarmPools: a new one (or one recreated under its name) is what unbound claims naming it wait for. */
  readonly poolSink: WatchSink<Keyed<PoolRecord>> = this.sink(
    this.pools,
    poolRecordOf,
    (key, pool) => {
      const before = this.pools.get(key);
      this.pools.set(key, pool);
      return before?.uid === pool.uid ? [] : this.waitingFor(pool);
    },
    (key) => {
      this.pools.delete(key);
      return [];
    },
  );

  claim(key: string): ClaimRecord | undefined {
    return this.claims.get(key);
  }
  claimKeys(): string[] {
    return [...this.claims.keys()];
  }
  sandbox(namespace: string, name: string): BindingSandbox | undefined {
    const key = keyOf(namespace, name);
    return this.claimed.get(key) ?? this.pooled.get(key);
  }
  poolSandboxes(namespace: string, pool: string): BindingSandbox[] {
    const keys = this.byPool.get(keyOf(namespace, pool)) ?? new Set<string>();
    return [...keys].flatMap((key) => {
      const sandbox = this.pooled.get(key);
      return sandbox ? [sandbox] : [];
    });
  }
  pool(namespace: string, name: string): PoolRecord | undefined {
    return this.pools.get(keyOf(namespace, name));
  }
  firstSeen(key: string): number | undefined {
    return this.seen.get(key);
  }
  get counts() {
    return {
      claims: this.claims.size,
      sandboxes: new Set([...this.claimed.keys(), ...this.pooled.keys()]).size,
    };
  }

  /** The unbound claims that name this pool: each waited for it (reason WarmPoolNotFound), looked at now. */
  private waitingFor(pool: PoolRecord): string[] {
    return [...this.claims.entries()]
      .filter(
        ([, claim]) =>
          claim.namespace === pool.namespace &&
          claim.spec.warmPoolRef?.name === pool.name &&
          claim.status.sandbox === undefined,
      )
      .map(([key]) => key);
  }

  private unindex(key: string): void {
    const before = this.pooled.get(key);
    if (before?.pool === undefined) return;
    const poolKey = keyOf(before.namespace, before.pool);
    const keys = this.byPool.get(poolKey);
    keys?.delete(key);
    if (keys?.size === 0) this.byPool.delete(poolKey);
  }

  private sink<T extends { readonly namespace: string; readonly name: string }>(
    current: ReadonlyMap<string, T>,
    decode: (raw: unknown) => T | undefined,
    put: (key: string, value: T) => string[],
    drop: (key: string) => string[],
  ): WatchSink<Keyed<T>> {
    const touch = (keys: Iterable<string>) => {
      for (const key of new Set(keys)) this.enqueue(key);
    };
    return {
      decode: (raw) => {
        const value = decode(raw);
        return value && { key: keyOf(value.namespace, value.name), value };
      },
      replace: (items) => {
        const kept = new Set<string>();
        const touched: string[] = [];
        for (const item of items) {
          if (item === undefined) continue;
          kept.add(item.key);
          touched.push(...put(item.key, item.value));
        }
        for (const key of [...current.keys()]) if (!kept.has(key)) touched.push(...drop(key));
        touch(touched);
      },
      apply: (type: WatchEventType, item) => {
        if (item === undefined) return;
        touch(type === 'DELETED' ? drop(item.key) : put(item.key, item.value));
      },
    };
  }
}

const claimKeysOf = (sandbox: BindingSandbox) =>
  sandbox.claim === undefined ? [] : [keyOf(sandbox.namespace, sandbox.claim)];
