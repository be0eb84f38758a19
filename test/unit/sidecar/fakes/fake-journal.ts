/** An in-memory Journal for unit tests; it can be told to fail, and it keeps what it was given. */
import type { Journal } from '../../../../operator/sidecar/process/os/ports.ts';

export class FakeJournal<E> implements Journal<E> {
  entries: E[] = [];
  rewrites = 0;
  appends = 0;
  failAppends = false;

  constructor(initial: readonly E[] = []) {
    this.entries = [...initial];
  }

  append(entry: E): Promise<void> {
    if (this.failAppends) return Promise.reject(new Error('disk full'));
    this.entries.push(structuredClone(entry));
    this.appends += 1;
    return Promise.resolve();
  }

  replay(): Promise<{ entries: readonly E[]; skipped: number }> {
    return Promise.resolve({ entries: this.entries.map((e) => structuredClone(e)), skipped: 0 });
  }

  appendsSinceRewrite(): number {
    return this.appends;
  }

  rewrite(entries: readonly E[]): Promise<void> {
    this.rewrites += 1;
    this.appends = 0;
    this.entries = entries.map((e) => structuredClone(e));
    return Promise.resolve();
  }
}
