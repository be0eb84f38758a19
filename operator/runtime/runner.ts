/**
 * Runs reconciles with a fixed number of workers over the work queue. The queue guarantees one worker per
 * key; the runner applies the reconcile's `Action`, or the error policy on a throw, and reports metrics.
 *
 * A misconfiguration (`AwaitFix`) is said once per key, at error level with its fix, until a turn of that
 * key succeeds; the observer hears of it and of its end, and the key is turned once at once each time so
 * the domain can record it on the object. After that the key comes back only on a change (the watch) or
 * on the slow recheck: the fix is usually made to objects the controller does not watch (RBAC, admission
 * parameters, namespace labels), so waiting for a change alone could miss it for ever.
 */
import type { Logger } from 'pino';
import type { Action } from './action.ts';
import { controllerErrorOf, errorPolicy, type Misconfiguration } from './error-policy.ts';
import type { WorkQueue } from './queue.ts';

export type Reconcile = (key: string, log: Logger) => Promise<Action>;

export type RunnerObserver = {
  readonly onResult?: (result: 'success' | 'error' | 'requeue_after', seconds: number) => void;
  readonly onActiveWorkers?: (active: number) => void;
  /** A reconcile threw a programming error (TypeError, RangeError, ...): controller-runtime's panic. */
  readonly onPanic?: () => void;
  /**
   * A key's reconcile met a misconfiguration it had not met since its last success (or ever). The domain may
   * answer it with a better fix (it knows who the operator is); that is the one said.
   */
  readonly onMisconfigured?: (
    key: string,
    misconfiguration: Misconfiguration,
  ) => Misconfiguration | undefined;
  /** A key that was misconfigured reconciled successfully. */
  readonly onReconfigured?: (key: string) => void;
};

export type RunnerOptions = {
  /** How long a misconfigured key waits for a look without a change of its objects. */
  readonly misconfiguredRecheckMs: number;
};

export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = { misconfiguredRecheckMs: 300_000 };

export class Runner {
  private active = 0;
  /** Numbers each reconcile, so one reconcile's log lines can be found together. */
  private reconciles = 0;
  private readonly workers: Promise<void>[] = [];
  /** The misconfiguration each key last met, as said: a key is in here from its first refusal to its next success. */
  private readonly misconfigured = new Map<string, string>();

  constructor(
    private readonly queue: WorkQueue,
    private readonly reconcile: Reconcile,
    private readonly log: Logger,
    private readonly observer: RunnerObserver = {},
    private readonly options: RunnerOptions = DEFAULT_RUNNER_OPTIONS,
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
      if (this.misconfigured.delete(key)) {
        log.info('the misconfiguration is resolved: the reconcile succeeded');
        this.observer.onReconfigured?.(key);
        this.queue.add(key); // the next turn records the resolution
      }
      this.observer.onResult?.(
        action.kind === 'RequeueAfter' ? 'requeue_after' : 'success',
        elapsed(started),
      );
    } catch (thrown) {
      this.observer.onResult?.('error', elapsed(started));
      const error = controllerErrorOf(thrown);
      if (error.kind === 'Bug') this.observer.onPanic?.();
      const decision = errorPolicy(error);
      switch (decision.kind) {
        case 'RetryWithBackoff': {
          const retryInMs = this.queue.addRateLimited(key);
          const fields =
            error.kind === 'KubeRequestFailed' && error.error.conflict
              ? { step: error.error.step, target: error.error.target, retryInMs }
              : { err: thrown, retryInMs, failures: this.queue.failuresOf(key) };
          log[decision.level](fields, decision.why);
          return;
        }
        case 'RequeueAfter':
          this.queue.forget(key);
          this.queue.addAfter(key, decision.ms);
          log.info({ err: thrown, retryInMs: decision.ms }, decision.why);
          return;
        case 'AwaitFix': {
          this.queue.forget(key);
          const retryInMs = this.options.misconfiguredRecheckMs;
          const said = `${decision.misconfiguration.reason}\n${decision.misconfiguration.refused}`;
          if (this.misconfigured.get(key) === said) {
            log.debug(
              { reason: decision.misconfiguration.reason, retryInMs },
              'still misconfigured; said before',
            );
          } else {
            this.misconfigured.set(key, said);
            const misconfiguration =
              this.observer.onMisconfigured?.(key, decision.misconfiguration) ?? decision.misconfiguration;
            log.error(
              { err: thrown, reason: misconfiguration.reason, fix: misconfiguration.fix, retryInMs },
              `${decision.why}: ${misconfiguration.refused}; fix: ${misconfiguration.fix}`,
            );
            this.queue.add(key); // the next turn records it on the object
          }
          this.queue.addAfter(key, retryInMs);
          return;
        }
        case 'Terminal':
          this.queue.forget(key);
          log.error({ err: thrown }, decision.why);
          return;
      }
    }
  }
}

const elapsed = (started: number) => (performance.now() - started) / 1000;
