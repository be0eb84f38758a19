import { afterEach, describe, expect, it, vi } from 'vitest';
import { eventually, pending } from '../../harness/eventually.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('eventually', () => {
  it('returns the value the check waited for', async () => {
    let calls = 0;
    const value = await eventually('the third call', () => {
      calls += 1;
      return Promise.resolve(calls === 3 ? 'ready' : pending({ calls }));
    });
    expect(value).toBe('ready');
  });

  it('says on timeout what it last saw', async () => {
    vi.useFakeTimers();
    const waiting = eventually(
      'sbx blocked',
      () => Promise.resolve(pending({ phase: 'Terminating' })),
      1_000,
    );
    const failed = expect(waiting).rejects.toThrow(
      'timed out after 1000 ms waiting for sbx blocked; last saw {"phase":"Terminating"}',
    );
    await vi.advanceTimersByTimeAsync(2_000);
    await failed;
  });

  it('says on timeout how the last check failed', async () => {
    vi.useFakeTimers();
    const waiting = eventually('the API', () => Promise.reject(new Error('connection refused')), 1_000);
    const failed = expect(waiting).rejects.toThrow(
      'waiting for the API; last check failed: connection refused',
    );
    await vi.advanceTimersByTimeAsync(2_000);
    await failed;
  });
});
