/** One call under a deadline, and the system clock behind it, driven by fake timers. */
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withDeadline } from '../../../operator/ledger-walk/deadline.ts';
import { systemClock } from '../../../operator/ledger-walk/index.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A call that settles after `ms` unless its signal aborts first; records when it saw the abort. */
function call(ms: number, settle: number | Error) {
  const seen: { abortedAt?: number } = {};
  const run = (signal: AbortSignal) =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (settle instanceof Error) reject(settle);
        else resolve(settle);
      }, ms);
      signal.addEventListener('abort', () => {
        seen.abortedAt = Date.now();
        clearTimeout(timer);
        reject(new Error('aborted'));
      });
    });
  return { run, seen };
}

describe('withDeadline', () => {
  it('returns the value of a call that ends in time, and leaves no timer behind', async () => {
    const { run } = call(10, 7);
    const result = withDeadline(run, systemClock, 5_000);
    await vi.advanceTimersByTimeAsync(10);
    expect(await result).toEqual({ kind: 'Done', value: 7 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('times out at its cap, and aborts the call it gives up on at that moment', async () => {
    const { run, seen } = call(60_000, 7);
    const result = withDeadline(run, systemClock, 5_000);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(seen.abortedAt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toEqual({ kind: 'TimedOut' });
    expect(seen.abortedAt).toBe(5_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reports a call that fails on its own as Failed, with its error', async () => {
    const boom = new Error('503 from locator');
    const { run } = call(10, boom);
    const result = withDeadline(run, systemClock, 5_000, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(10);
    expect(await result).toEqual({ kind: 'Failed', error: boom });
  });

  it('is Cancelled, not Failed, when the caller cancels, and aborts the call at once', async () => {
    const cancel = new AbortController();
    const { run, seen } = call(60_000, 7);
    const result = withDeadline(run, systemClock, 5_000, cancel.signal);
    await vi.advanceTimersByTimeAsync(20);
    cancel.abort();
    expect(await result).toEqual({ kind: 'Cancelled' });
    expect(seen.abortedAt).toBe(20);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('leaves no listener on the caller’s signal once settled', async () => {
    // A walk's signal outlives thousands of lookups: each must take its listener away.
    const cancel = new AbortController();
    for (const ms of [10, 6_000]) {
      const result = withDeadline(call(ms, 7).run, systemClock, 5_000, cancel.signal);
      expect(getEventListeners(cancel.signal, 'abort')).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(ms);
      await result;
      expect(getEventListeners(cancel.signal, 'abort')).toHaveLength(0);
    }
  });
});

describe('systemClock', () => {
  const watch = (promise: Promise<void>) => {
    const state = { resolvedAt: undefined as number | undefined };
    void promise.then(() => (state.resolvedAt = Date.now()));
    return state;
  };

  it('resolves once the time has passed, not before', async () => {
    const wait = watch(systemClock.after(100, new AbortController().signal));
    await vi.advanceTimersByTimeAsync(99);
    expect(wait.resolvedAt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(wait.resolvedAt).toBe(100);
  });

  it('never resolves, and sets no timer, for a signal already aborted', async () => {
    const wait = watch(systemClock.after(100, AbortSignal.abort()));
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(wait.resolvedAt).toBeUndefined();
  });

  it('never resolves, and clears its timer, once its signal aborts', async () => {
    const abort = new AbortController();
    const wait = watch(systemClock.after(100, abort.signal));
    await vi.advanceTimersByTimeAsync(50);
    abort.abort();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(wait.resolvedAt).toBeUndefined();
  });

  it('tells the time', () => {
    vi.setSystemTime(1_234);
    expect(systemClock.now()).toBe(1_234);
  });
});
