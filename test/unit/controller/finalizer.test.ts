import { describe, expect, it } from 'vitest';
import { addFinalizerPatch, removeFinalizerPatch } from '../../../operator/controller/finalizer.ts';

const ours = 'sandbox.agents.dev/exclusivity';

describe('finalizer patches', () => {
  it('add to an empty list under a resourceVersion test', () => {
    expect(addFinalizerPatch({ finalizers: undefined, resourceVersion: '41' }, ours)).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '41' },
      { op: 'add', path: '/metadata/finalizers', value: [ours] },
    ]);
  });

  it('append to an existing list after testing it', () => {
    expect(addFinalizerPatch({ finalizers: ['other/x'] }, ours)).toEqual([
      { op: 'test', path: '/metadata/finalizers', value: ['other/x'] },
      { op: 'add', path: '/metadata/finalizers/-', value: ours },
    ]);
  });

  it('do nothing when the finalizer is already there, or already gone', () => {
    expect(addFinalizerPatch({ finalizers: [ours] }, ours)).toBeUndefined();
    expect(removeFinalizerPatch({ finalizers: ['other/x'] }, ours)).toBeUndefined();
    expect(removeFinalizerPatch({}, ours)).toBeUndefined();
  });

  it('remove ours by position, testing the whole list so another party’s finalizer is never dropped', () => {
    expect(removeFinalizerPatch({ finalizers: ['other/x', ours, 'other/y'] }, ours)).toEqual([
      { op: 'test', path: '/metadata/finalizers', value: ['other/x', ours, 'other/y'] },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
  });
});
