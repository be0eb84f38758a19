import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { awaitChange, requeueAfter, type Action } from '../../../operator/runtime/action.ts';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
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
    vi.useFakeTimers();
    try {
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
      await vi.advanceTimersByTimeAsync(0);
      expect(results).toEqual(['error']);
      await vi.advanceTimersByTimeAsync(1); // the first backoff: baseMs
      expect(results).toEqual(['error', 'error']);
      expect(queue.failuresOf('a')).toBe(2);
      await vi.advanceTimersByTimeAsync(1);
      expect(results).toEqual(['error', 'error']); // the second backoff is 2 ms
      await vi.advanceTimersByTimeAsync(1);
      expect(results).toEqual(['error', 'error', 'success']);
      expect(queue.failuresOf('a')).toBe(0);
      queue.shutDown();
      await runner.drained();
    } finally {
      vi.useRealTimers();
    }
  });

  it('comes back to a key after the requested delay, not before', async () => {
    vi.useFakeTimers();
    try {
      const queue = new WorkQueue();
      let calls = 0;
      const runner = new Runner(
        queue,
        () => {
          calls += 1;
          return Promise.resolve(calls < 2 ? requeueAfter(30) : awaitChange());
        },
        silent,
      );
      runner.start(2);
      queue.add('a');
      await vi.advanceTimersByTimeAsync(0);
      expect(calls).toBe(1);
      await vi.advanceTimersByTimeAsync(29);
      expect(calls).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toBe(2);
      queue.shutDown();
      await runner.drained();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('Runner and a misconfiguration', () => {
  const refusal = () =>
    new KubeRequestError('Create', 'pod team-a/sbx-0', 403, {
      cause: {
        body: JSON.stringify({
          message:
            'pods "sbx-0" is forbidden: User "dev" cannot create resource "pods" in API group "" in the namespace "team-a"',
        }),
      },
    });

  it('says it once with the fix, turns the key once at once, then waits for a change instead of backing off', async () => {
    const queue = new WorkQueue({ baseMs: 1, maxMs: 10 });
    type Line = { level: number; msg: string; fix?: string };
    const lines: Line[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Line) });
    const heard: string[] = [];
    let refusing = true;
    let calls = 0;
    const runner = new Runner(
      queue,
      () => {
        calls += 1;
        return refusing ? Promise.reject(refusal()) : Promise.resolve(awaitChange());
      },
      log,
      {
        onMisconfigured: (key, misconfiguration) => {
          heard.push(`${key} ${misconfiguration.reason}`);
          return undefined;
        },
        onReconfigured: (key) => heard.push(`${key} resolved`),
      },
      { misconfiguredRecheckMs: 3_600_000 },
    );
    runner.start(1);
    queue.add('a');
    await until(() => calls === 2); // the refusal, and the one turn that records it
    await idle(queue);
    expect(heard).toEqual(['a RBACForbidden']);
    expect(queue.failuresOf('a')).toBe(0);
    const errors = lines.filter((line) => line.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.fix).toContain('grant dev "create" on pods in namespace team-a');
    expect(errors[0]?.msg).toContain('User "dev" cannot create resource "pods"');
    expect(lines.filter((line) => line.msg.includes('still misconfigured'))).toHaveLength(1);

    queue.add('a'); // a change of the sandbox: looked at again, not said again
    await until(() => calls === 3);
    await idle(queue);
    expect(lines.filter((line) => line.level === 50)).toHaveLength(1);

    refusing = false; // someone granted the permission; the next change finds it fixed
    queue.add('a');
    await until(() => calls === 5); // the success, and the one turn that records the resolution
    await idle(queue);
    expect(heard).toEqual(['a RBACForbidden', 'a resolved']);
    expect(lines.filter((line) => line.msg.includes('misconfiguration is resolved'))).toHaveLength(1);
    expect(lines.filter((line) => line.msg.includes('backoff'))).toEqual([]);
    queue.shutDown();
    await runner.drained();
  });
});

/** Lets the event loop run until `done` holds; fails, saying so, after 10,000 turns. */
async function until(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000; turn += 1) {
    if (done()) return;
    await tick();
  }
  throw new Error('the condition never held');
}

/** Waits until no key is in flight or queued (delayed keys do not count). */
async function idle(queue: WorkQueue): Promise<void> {
  await until(() => queue.inFlightSince().length === 0 && queue.depth === 0);
}
