/**
 * A read a deletion turn starts ahead (operator/controller/deletion/read-ahead.ts) on its own: taken at most
 * once, its failure kept until a step takes it. The turn's use of it is deletion-read-ahead.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { Ahead, turnReads } from '../../../operator/controller/deletion/read-ahead.ts';

const never = (): Promise<string> => Promise.reject(new Error('not read ahead'));

describe('a read started ahead', () => {
  it('is what the step takes, without reading again', async () => {
    const ahead = new Ahead<string>();
    const read = vi.fn(() => Promise.resolve('listed'));
    ahead.start(read);
    const fresh = vi.fn(never);
    await expect(ahead.take(fresh)).resolves.toBe('listed');
    expect(read).toHaveBeenCalledTimes(1);
    expect(fresh).not.toHaveBeenCalled();
  });

  it('is taken once: a second take reads afresh', async () => {
    const ahead = new Ahead<string>();
    ahead.start(() => Promise.resolve('first'));
    await ahead.take(never);
    await expect(ahead.take(() => Promise.resolve('second'))).resolves.toBe('second');
  });

  it('is not started twice: the first read stands', async () => {
    const ahead = new Ahead<string>();
    const later = vi.fn(() => Promise.resolve('later'));
    ahead.start(() => Promise.resolve('first'));
    ahead.start(later);
    await expect(ahead.take(never)).resolves.toBe('first');
    expect(later).not.toHaveBeenCalled();
  });

  it('reads now when none was started', async () => {
    await expect(new Ahead<string>().take(() => Promise.resolve('now'))).resolves.toBe('now');
  });

  it('keeps its failure for the step that takes it, and rethrows that very error', async () => {
    const ahead = new Ahead<string>();
    const refused = new Error('HTTP 503');
    ahead.start(() => Promise.reject(refused));
    // Settled before anyone takes it: a turn that ends first never sees it as an unhandled rejection.
    await Promise.resolve();
    await expect(ahead.take(never)).rejects.toBe(refused);
  });
});

describe("a turn's reads", () => {
  it('are the references and the pods, each its own read ahead', async () => {
    const reads = turnReads();
    reads.references.start(() => Promise.resolve([]));
    await expect(reads.pods.take(() => Promise.resolve([]))).resolves.toEqual([]);
    await expect(reads.references.take(() => Promise.reject(new Error('read again')))).resolves.toEqual([]);
    expect(reads.references).toBeInstanceOf(Ahead);
    expect(reads.pods).toBeInstanceOf(Ahead);
  });
});
