/**
 * The work queue, with client-go's contract:
 * - a key is queued at most once (adds while queued coalesce);
 * - a key is never handed to two workers at once; a key added while in flight is handed out again after
 *   `done` (it is "dirty"), ahead of the queue if an `addFirst` asked for it;
 * - delayed adds keep the earliest due time; per-key exponential backoff for failures (`addRateLimited`),
 *   reset by `forget`.
 * Time comes from the global timers, so tests drive it with fake timers.
 */

export type BackoffLimits = { readonly baseMs: number; readonly maxMs: number };
export const DEFAULT_BACKOFF: BackoffLimits = { baseMs: 5, maxMs: 300_000 };

export type QueueObserver = {
  readonly onAdd?: () => void;
  readonly onRetry?: () => void;
  readonly onDepth?: (depth: number) => void;
  /** A key was handed to a worker after waiting this long in the queue. */
  readonly onGet?: (waitedSeconds: number) => void;
  /** A worker finished a key after working on it this long. */
  readonly onDone?: (workedSeconds: number) => void;
};

export class WorkQueue {
  private readonly queued: string[] = [];
  private readonly queuedSet = new Set<string>();
  /** Keys being worked on, with when a worker took each (Date.now()). */
  private readonly processing = new Map<string, number>();
  /** When each queued key was added, for the time it waits. */
  private readonly addedAt = new Map<string, number>();
  private readonly dirty = new Set<string>();
  /** Dirty keys an `addFirst` asked for: handed out again ahead of the queue, not behind it. */
  private readonly dirtyFirst = new Set<string>();
  private readonly delayed = new Map<string, { dueAt: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;

  constructor(
    private readonly backoff: BackoffLimits = DEFAULT_BACKOFF,
    private readonly observer: QueueObserver = {},
  ) {}

  get depth(): number {
    return this.queued.length;
  }

  add(key: string): void {
    this.enqueue(key, false);
  }

  /**
   * Like `add`, but ahead of every queued key (a queued one moves to the front): for work that finishes
   * something already under way, which would otherwise wait behind every new key.
   */
  addFirst(key: string): void {
    this.enqueue(key, true);
  }

  private enqueue(key: string, first: boolean): void {
    if (this.shuttingDown) return;
    this.observer.onAdd?.();
    if (this.processing.has(key)) {
      this.dirty.add(key);
      if (first) this.dirtyFirst.add(key);
      return;
    }
    if (this.queuedSet.has(key)) {
      if (first && this.queued[0] !== key) {
        this.queued.splice(this.queued.indexOf(key), 1);
        this.queued.unshift(key);
      }
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) {
      this.start(key, Date.now());
      waiter(key);
      return;
    }
    if (first) this.queued.unshift(key);
    else this.queued.push(key);
    this.queuedSet.add(key);
    this.addedAt.set(key, Date.now());
    this.observer.onDepth?.(this.queued.length);
  }

  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const dueAt = Date.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.dueAt <= dueAt) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.delayed.set(key, { dueAt, timer });
  }

  /** Requeue after a failure: baseMs · 2^failures, capped at maxMs. */
  addRateLimited(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const delay = Math.min(this.backoff.maxMs, this.backoff.baseMs * 2 ** failures);
    this.observer.onRetry?.();
    this.addAfter(key, delay);
    return delay;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key for a worker; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queued.shift();
    if (key !== undefined) {
      this.queuedSet.delete(key);
      this.start(key, this.addedAt.get(key) ?? Date.now());
      this.addedAt.delete(key);
      this.observer.onDepth?.(this.queued.length);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: string): void {
    const started = this.processing.get(key);
    this.processing.delete(key);
    if (started !== undefined) this.observer.onDone?.((Date.now() - started) / 1000);
    const first = this.dirtyFirst.delete(key);
    if (this.dirty.delete(key)) this.enqueue(key, first);
  }

  /** When each in-flight key was taken by its worker (Date.now()), for the unfinished-work gauges. */
  inFlightSince(): number[] {
    return [...this.processing.values()];
  }

  private start(key: string, addedAt: number): void {
    const now = Date.now();
    this.processing.set(key, now);
    this.observer.onGet?.((now - addedAt) / 1000);
  }

  /**
   * Stops handing out keys: waiting and later `get`s receive undefined, queued keys are left for the next
   * leader. In-flight keys finish normally.
   */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
