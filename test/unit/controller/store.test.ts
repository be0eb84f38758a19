import { describe, expect, it } from 'vitest';
import { ClusterStore } from '../../../operator/controller/store.ts';
import { podObject, sandboxOwner, sessionReference } from '../builders.ts';

const ref = (name: string, sandbox: string) => sessionReference(name).of(sandbox).fromWorktree('wt-1');

function store() {
  const enqueued: string[][] = [];
  const finishing: boolean[] = [];
  const s = new ClusterStore((keys, first) => {
    enqueued.push([...keys].sort());
    finishing.push(first === true);
  });
  return { enqueued, finishing, store: s };
}

const sandboxPod = (sandbox: string, ordinal: number) =>
  podObject(sandbox, ordinal).ownedBy(sandboxOwner(sandbox)).raw();

describe('ClusterStore', () => {
  it('enqueues a sandbox whose pod is gone as finishing work, and its other pod events as ordinary work', () => {
    const { store: s, enqueued, finishing } = store();
    s.podSink.apply('ADDED', sandboxPod('sbx', 0));
    s.podSink.apply('MODIFIED', sandboxPod('sbx', 0));
    s.podSink.apply('DELETED', sandboxPod('sbx', 0));
    expect(enqueued.map((keys) => [...new Set(keys)])).toEqual([['ns/sbx'], ['ns/sbx'], ['ns/sbx']]);
    expect(finishing).toEqual([false, false, true]);
    expect(s.pods('ns/sbx')).toEqual([]);
  });

  it('indexes references by the sandbox they name and enqueues that sandbox', () => {
    const { store: s, enqueued } = store();
    s.referenceSink.apply('ADDED', ref('r1', 'sbx-a').raw());
    expect(s.references('ns/sbx-a').map((e) => e.name)).toEqual(['r1']);
    expect(enqueued).toEqual([['ns/sbx-a']]);
  });

  it('moves nothing between sandboxes silently: a deleted reference enqueues its former sandbox', () => {
    const { store: s, enqueued } = store();
    s.referenceSink.apply('ADDED', ref('r1', 'sbx-a').raw());
    s.referenceSink.apply('DELETED', ref('r1', 'sbx-a').raw());
    expect(s.references('ns/sbx-a')).toEqual([]);
    expect(enqueued.at(-1)).toEqual(['ns/sbx-a']);
  });

  it('reports a relist that dropped objects as deletions', () => {
    const { store: s, enqueued } = store();
    s.referenceSink.replace([ref('r1', 'sbx-a').raw(), ref('r2', 'sbx-b').raw()]);
    s.referenceSink.replace([ref('r2', 'sbx-b').raw()]);
    expect(s.references('ns/sbx-a')).toEqual([]);
    expect(enqueued.at(-1)).toEqual(['ns/sbx-a', 'ns/sbx-b']);
  });

  it('keeps a malformed reference as unreadable evidence for its sandbox, never as nothing', () => {
    const { store: s } = store();
    s.referenceSink.apply('ADDED', ref('bad', 'sbx-a').malformed('state', 'Lost').raw());
    expect(s.references('ns/sbx-a')).toEqual([]);
    expect(s.unreadableReferences('ns/sbx-a').map((e) => e.field)).toEqual(['spec.state']);
  });

  it('holds a reference whose sandbox cannot be read against every sandbox of its namespace', () => {
    const { store: s } = store();
    s.sandboxSink.apply('ADDED', {
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'Sandbox',
      metadata: { name: 'sbx-z', namespace: 'ns' },
      spec: {},
    });
    s.referenceSink.apply('ADDED', ref('bad', 'sbx-a').malformed('sandbox', 42).raw());
    expect(s.unreadableReferences('ns/sbx-z')).toHaveLength(1);
    expect(s.unreadableReferences('other/sbx-z')).toHaveLength(0);
  });
});
