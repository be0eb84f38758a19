import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue } from '../../../operator/runtime/queue.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue', () => {
  it('hands out a key added first ahead of the queued ones, moving it up when it was queued already', async () => {
    const queue = new WorkQueue();
    for (const key of ['a', 'b', 'c']) queue.add(key);
    queue.addFirst('d');
    queue.addFirst('c');
    expect(queue.depth).toBe(4);
    const order = [];
    for (let i = 0; i < 4; i += 1) order.push(await queue.get());
    expect(order).toEqual(['c', 'd', 'a', 'b']);
  });

  it('coalesces a key added twice while queued', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('a');
    queue.add('b');
    expect(queue.depth).toBe(2);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
  });

  it('never hands a key to two workers, and hands it out again after done when re-added in flight', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    expect(queue.depth).toBe(0);
    const second = queue.get();
    let handed: string | undefined;
    void second.then((key) => (handed = key));
    await Promise.resolve();
    expect(handed).toBeUndefined();
    queue.done('a');
    expect(await second).toBe('a');
  });

  it('keeps a key added first while in flight first when it is handed out again', async () => {
    // A released deletion's turn ends as its pod's DELETED event arrives: the finishing turn that event asks
    // for must not wait behind every queued key.
    const queue = new WorkQueue();
    queue.add('released');
    expect(await queue.get()).toBe('released');
    for (const key of ['a', 'b', 'c']) queue.add(key);
    queue.addFirst('released');
    queue.done('released');
    expect(await queue.get()).toBe('released');
    // An ordinary add in flight still goes to the back.
    queue.add('released');
    queue.done('released');
    const order = [];
    for (let i = 0; i < 4; i += 1) order.push(await queue.get());
    expect(order).toEqual(['a', 'b', 'c', 'released']);
  });

  it('keeps the earlier due time when the same key is delayed twice', async () => {
    const queue = new WorkQueue();
    queue.addAfter('a', 1_000);
    queue.addAfter('a', 5_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.depth).toBe(1);
  });

  it('replaces a later due time with an earlier one', async () => {
    const queue = new WorkQueue();
    queue.addAfter('a', 5_000);
    queue.addAfter('a', 100);
    await vi.advanceTimersByTimeAsync(100);
    expect(queue.depth).toBe(1);
  });

  it('backs off exponentially per key and resets on forget', () => {
    const queue = new WorkQueue({ baseMs: 5, maxMs: 60 });
    expect([1, 2, 3, 4, 5].map(() => queue.addRateLimited('a'))).toEqual([5, 10, 20, 40, 60]);
    expect(queue.addRateLimited('b')).toBe(5);
    queue.forget('a');
    expect(queue.addRateLimited('a')).toBe(5);
  });

  it('releases waiting workers with undefined on shutdown and accepts no more keys', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.shutDown();
    expect(await waiting).toBeUndefined();
    queue.add('a');
    expect(await queue.get()).toBeUndefined();
  });
});

describe('WorkQueue timing, for the workqueue_* latency series', () => {
  it('reports how long a key waited and was worked on, and which keys are in flight since when', async () => {
    const waited: number[] = [];
    const worked: number[] = [];
    const queue = new WorkQueue(undefined, {
      onGet: (seconds) => waited.push(seconds),
      onDone: (seconds) => worked.push(seconds),
    });
    queue.add('a');
    vi.advanceTimersByTime(250);
    expect(await queue.get()).toBe('a');
    const taken = Date.now();
    vi.advanceTimersByTime(1_500);
    expect(queue.inFlightSince()).toEqual([taken]);
    queue.done('a');
    expect(waited).toEqual([0.25]);
    expect(worked).toEqual([1.5]);
    expect(queue.inFlightSince()).toEqual([]);
  });

  it('counts no wait for a key handed straight to a waiting worker', async () => {
    const waited: number[] = [];
    const queue = new WorkQueue(undefined, { onGet: (seconds) => waited.push(seconds) });
    const next = queue.get();
    vi.advanceTimersByTime(1_000);
    queue.add('a');
    expect(await next).toBe('a');
    expect(waited).toEqual([0]);
  });
});
