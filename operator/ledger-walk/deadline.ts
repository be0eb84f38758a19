/**
 * One call under a deadline. The deadline's own expiry is reported as `TimedOut` and nothing else is:
 * a call that fails on its own is `Failed`, with its error as the cause.
 */
import type { Clock } from './ports.ts';

export type Bounded<T> =
  | { readonly kind: 'Done'; readonly value: T }
  | { readonly kind: 'TimedOut' }
  | { readonly kind: 'Failed'; readonly error: unknown };

/** Only a call given a cancel signal can end `Cancelled`. */
export type Cancellable<T> = Bounded<T> | { readonly kind: 'Cancelled' };

export function withDeadline<T>(
  call: (signal: AbortSignal) => Promise<T>,
  clock: Clock,
  ms: number,
): Promise<Bounded<T>>;
export function withDeadline<T>(
  call: (signal: AbortSignal) => Promise<T>,
  clock: Clock,
  ms: number,
  cancel: AbortSignal,
): Promise<Cancellable<T>>;
export async function withDeadline<T>(
  call: (signal: AbortSignal) => Promise<T>,
  clock: Clock,
  ms: number,
  cancel?: AbortSignal,
): Promise<Cancellable<T>> {
  const scope = new AbortController();
  const onCancel = () => {
    scope.abort();
  };
  // A signal fires `abort` at most once, and `finally` removes the listener either way.
  cancel?.addEventListener('abort', onCancel);
  const timedOut = Symbol('timedOut');
  try {
    const result = await Promise.race([
      call(scope.signal).then((value) => ({ value })),
      clock.after(ms, scope.signal).then(() => timedOut),
    ]);
    if (result === timedOut) return { kind: 'TimedOut' };
    return { kind: 'Done', value: (result as { value: T }).value };
  } catch (error) {
    if (cancel?.aborted) return { kind: 'Cancelled' };
    return { kind: 'Failed', error };
  } finally {
    cancel?.removeEventListener('abort', onCancel);
    scope.abort();
  }
}

export const describeError = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);
