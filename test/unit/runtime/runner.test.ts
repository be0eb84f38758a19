import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { awaitChange, requeueAfter, type Action } from '../../../operator/runtime/action.ts';
import { WorkQueue } from '../../../operator/runtime/queue.ts';
import { Runner } from '../../../operator/runtime/runner.ts';

const silent = pino({ level: 'silent' });
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Runner', () => {
  it('runs up to the worker count at once and never two reconciles of one key', async () => {
    const queue = new WorkQueue();
    let running = 0;
    let maxRunning = 0;
    const runningKeys = new Set<string>();
    let overlap = false;
    const gates: (() => void)[] = [];
    const runner = new Runner(
      queue,
      async (key) => {
        if (runningKeys.has(key)) overlap = true;
        runningKeys.add(key);
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running -= 1;
        runningKeys.delete(key);
        return awaitChange();
      },
      silent,
    );
    runner.start(8);
    for (let i = 0; i < 20; i += 1) queue.add(`k${i % 10}`);
    for (let round = 0; round < 10; round += 1) {
      await tick();
      for (const open of gates.splice(0)) open();
      for (let i = 0; i < 10; i += 1) queue.add(`k${i}`);
    }
    await tick();
    queue.shutDown();
    for (const open of gates.splice(0)) open();
    await runner.drained();
    expect(maxRunning).toBe(8);
    expect(overlap).toBe(false);
  });

  it('requeues a failed key with backoff and forgets failures after a success', async () => {
    const queue = new WorkQueue({ baseMs: 1, maxMs: 10 });
    const results: string[] = [];
    let calls = 0;
    const runner = new Runner(
      queue,
      (): Promise<Action> => {
        calls += 1;
        if (calls <= 2) return Promise.reject(new Error('conflict'));
        return Promise.resolve(awaitChange());
      },
      silent,
      { onResult: (result) => results.push(result) },
    );
    runner.start(1);
    queue.add('a');
    while (results.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    queue.shutDown();
    await runner.drained();
    expect(results).toEqual(['error', 'error', 'success']);
    expect(queue.failuresOf('a')).toBe(0);
  });

  it('comes back to a key after the requested delay', async () => {
    const queue = new WorkQueue();
    const seen: number[] = [];
    const runner = new Runner(
      queue,
      () => {
        seen.push(Date.now());
        return Promise.resolve(seen.length < 2 ? requeueAfter(30) : awaitChange());
      },
      silent,
    );
    runner.start(2);
    queue.add('a');
    while (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    queue.shutDown();
    await runner.drained();
    expect(seen[1]! - seen[0]!).toBeGreaterThanOrEqual(29);
  });
});
