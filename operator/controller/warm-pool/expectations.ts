/**
 * Create and delete expectations (client-go's ControllerExpectations, by name): what a pool's turn wrote and
 * the cache has not shown yet. A sandbox made counts as there until the cache has it; one deleted counts as
 * gone until the cache shows it deleting or gone. An expectation the cache never meets (a lost event, after
 * which the watch relists anyway) lapses after `ttlMs`, so a pool is never stuck on one.
 */
export const EXPECTATION_TTL_MS = 120_000;

type Seen = (name: string) => 'Absent' | 'Present' | 'Deleting';

export class Expectations {
  /** Pool key → sandbox name → when the expectation lapses (ms since the epoch). */
  readonly #creates = new Map<string, Map<string, number>>();
  readonly #deletes = new Map<string, Map<string, number>>();

  constructor(private readonly ttlMs = EXPECTATION_TTL_MS) {}

  expectCreate(pool: string, name: string, now: number): void {
    this.#entry(this.#creates, pool).set(name, now + this.ttlMs);
  }

  /** A create that failed: nothing will appear. */
  withdrawCreate(pool: string, name: string): void {
    this.#creates.get(pool)?.delete(name);
  }

  expectDelete(pool: string, name: string, now: number): void {
    this.#entry(this.#deletes, pool).set(name, now + this.ttlMs);
  }

  /** Names made and not yet in the cache; the met and lapsed ones are dropped. */
  creating(pool: string, seen: Seen, now: number): number {
    return this.#pending(this.#creates, pool, (name) => seen(name) === 'Absent', now).size;
  }

  /** Names deleted that the cache still shows undeleted. */
  deleting(pool: string, seen: Seen, now: number): ReadonlySet<string> {
    return this.#pending(this.#deletes, pool, (name) => seen(name) === 'Present', now);
  }

  /** The pool is gone: its expectations with it. */
  forget(pool: string): void {
    this.#creates.delete(pool);
    this.#deletes.delete(pool);
  }

  #entry(map: Map<string, Map<string, number>>, pool: string): Map<string, number> {
    let entry = map.get(pool);
    if (entry === undefined) {
      entry = new Map();
      map.set(pool, entry);
    }
    return entry;
  }

  #pending(
    map: Map<string, Map<string, number>>,
    pool: string,
    unmet: (name: string) => boolean,
    now: number,
  ): Set<string> {
    const entry = map.get(pool);
    const pending = new Set<string>();
    if (entry === undefined) return pending;
    for (const [name, lapsesAt] of entry) {
      if (lapsesAt > now && unmet(name)) pending.add(name);
      else entry.delete(name);
    }
    if (entry.size === 0) map.delete(pool);
    return pending;
  }
}
