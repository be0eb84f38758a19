/**
 * Runs reconciles with a fixed number of workers over the work queue. The queue guarantees one worker per
 * key; the runner applies the reconcile's `Action`, or the error policy on a throw, and reports metrics.
 */
import type { Logger } from 'pino';
import type { Action } from './action.ts';
import { KubeRequestError } from '../kube/errors.ts';
import type { WorkQueue } from './queue.ts';

export type Reconcile = (key: string, log: Logger) => Promise<Action>;

export type RunnerObserver = {
  readonly onResult?: (result: 'success' | 'error' | 'requeue_after', seconds: number) => void;
  readonly onActiveWorkers?: (active: number) => void;
  /** A reconcile threw a programming error (TypeError, RangeError, ...): controller-runtime's panic. */
  readonly onPanic?: () => void;
};

/** JavaScript's analogue of a Go panic: a bug in our code, not a failed request. It is still retried. */
const isProgrammingError = (error: unknown) =>
  error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError;

export class Runner {
  private active = 0;
  /** Numbers each reconcile, so one reconcile's log lines can be found together. */
  private reconciles = 0;
  private readonly workers: Promise<void>[] = [];

  constructor(
    private readonly queue: WorkQueue,
    private readonly reconcile: Reconcile,
    private readonly log: Logger,
    private readonly observer: RunnerObserver = {},
  ) {}

  start(workers: number): void {
    for (let i = 0; i < workers; i += 1) this.workers.push(this.work());
  }

  /** Resolves when every worker has finished its in-flight reconcile (after `queue.shutDown()`). */
  async drained(): Promise<void> {
    await Promise.all(this.workers);
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      this.active += 1;
      this.observer.onActiveWorkers?.(this.active);
      try {
        await this.runOne(key);
      } finally {
        this.active -= 1;
        this.observer.onActiveWorkers?.(this.active);
        this.queue.done(key);
      }
    }
  }

  private async runOne(key: string): Promise<void> {
    this.reconciles += 1;
    const log = this.log.child({ key, reconcileId: this.reconciles });
    const started = performance.now();
    try {
      const action = await this.reconcile(key, log);
      this.queue.forget(key);
      if (action.kind === 'RequeueAfter') this.queue.addAfter(key, action.ms);
      this.observer.onResult?.(
        action.kind === 'RequeueAfter' ? 'requeue_after' : 'success',
        elapsed(started),
      );
    } catch (error) {
      const delay = this.queue.addRateLimited(key);
      this.observer.onResult?.('error', elapsed(started));
      if (isProgrammingError(error)) {
        this.observer.onPanic?.();
        log.error(
          { err: error, retryInMs: delay },
          'reconcile hit a programming error; retrying with backoff',
        );
        return;
      }
      if (error instanceof KubeRequestError && error.conflict) {
        log.info(
          { step: error.step, target: error.target, retryInMs: delay },
          'stale write refused by the API server; retrying from fresh state',
        );
        return;
      }
      log.warn(
        { err: error, retryInMs: delay, failures: this.queue.failuresOf(key) },
        'reconcile failed; retrying with backoff',
      );
    }
  }
}

const elapsed = (started: number) => (performance.now() - started) / 1000;
