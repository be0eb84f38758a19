import { describe, expect, it } from 'vitest';
import { ClusterStore } from '../../../operator/controller/cache/store.ts';
import { noticeKey } from '../../../operator/api/session-reference.ts';
import type { WatchEventType } from '../../../operator/runtime/watcher.ts';

type Sink<T> = {
  decode(raw: unknown): T;
  apply(type: WatchEventType, item: T): void;
  replace(items: readonly T[]): void;
};
/** What the watcher does with an event: decode the object as it arrives, then apply it. */
const deliver = <T>(sink: Sink<T>, type: WatchEventType, raw: unknown) => sink.apply(type, sink.decode(raw));
const relist = <T>(sink: Sink<T>, raws: readonly unknown[]) =>
  sink.replace(raws.map((raw) => sink.decode(raw)));
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
    deliver(s.podSink, 'ADDED', sandboxPod('sbx', 0));
    deliver(s.podSink, 'MODIFIED', sandboxPod('sbx', 0));
    deliver(s.podSink, 'DELETED', sandboxPod('sbx', 0));
    expect(enqueued.map((keys) => [...new Set(keys)])).toEqual([['ns/sbx'], ['ns/sbx'], ['ns/sbx']]);
    expect(finishing).toEqual([false, false, true]);
    expect(s.pods('ns/sbx')).toEqual([]);
  });

  it('indexes references by the sandbox they name and enqueues that sandbox', () => {
    const { store: s, enqueued } = store();
    deliver(s.referenceSink, 'ADDED', ref('r1', 'sbx-a').raw());
    expect(s.references('ns/sbx-a').map((e) => e.name)).toEqual(['r1']);
    expect(enqueued).toEqual([['ns/sbx-a']]);
  });

  it('moves nothing between sandboxes silently: a deleted reference enqueues its former sandbox', () => {
    const { store: s, enqueued } = store();
    deliver(s.referenceSink, 'ADDED', ref('r1', 'sbx-a').raw());
    deliver(s.referenceSink, 'DELETED', ref('r1', 'sbx-a').raw());
    expect(s.references('ns/sbx-a')).toEqual([]);
    expect(enqueued.at(-1)).toEqual(['ns/sbx-a']);
  });

  it('reports a relist that dropped objects as deletions', () => {
    const { store: s, enqueued } = store();
    relist(s.referenceSink, [ref('r1', 'sbx-a').raw(), ref('r2', 'sbx-b').raw()]);
    relist(s.referenceSink, [ref('r2', 'sbx-b').raw()]);
    expect(s.references('ns/sbx-a')).toEqual([]);
    expect(enqueued.at(-1)).toEqual(['ns/sbx-a', 'ns/sbx-b']);
  });

  it('counts the Attached references whose turn is Running, and no other', () => {
    const { store: s, enqueued } = store();
    const turn = (phase: string) => ({ turn: { id: `t-${phase}`, phase } });
    deliver(s.referenceSink, 'ADDED', ref('running', 'sbx-a').withStatus(turn('Running')).raw());
    deliver(s.referenceSink, 'ADDED', ref('done', 'sbx-a').withStatus(turn('Completed')).raw());
    deliver(s.referenceSink, 'ADDED', ref('none', 'sbx-a').raw());
    deliver(s.referenceSink, 'ADDED', ref('gone', 'sbx-a').detached().withStatus(turn('Running')).raw());
    deliver(s.referenceSink, 'ADDED', ref('other', 'sbx-b').withStatus(turn('Running')).raw());
    expect(s.runningTurns('ns/sbx-a')).toBe(1);
    expect(s.runningTurns('ns/sbx-b')).toBe(1);
    expect(s.runningTurns('ns/sbx-c')).toBe(0);
    // A turn that ends enqueues its sandbox: a drain's move may wait for it.
    deliver(s.referenceSink, 'MODIFIED', ref('running', 'sbx-a').withStatus(turn('Completed')).raw());
    expect(s.runningTurns('ns/sbx-a')).toBe(0);
    expect(enqueued.at(-1)).toEqual(['ns/sbx-a', 'ns/sbx-a']);
  });

  it('keeps a malformed reference as unreadable evidence for its sandbox, never as nothing', () => {
    const { store: s } = store();
    deliver(s.referenceSink, 'ADDED', ref('bad', 'sbx-a').malformed('state', 'Lost').raw());
    expect(s.references('ns/sbx-a')).toEqual([]);
    expect(s.unreadableReferences('ns/sbx-a').map((e) => e.field)).toEqual(['spec.state']);
  });

  it('holds a reference whose sandbox cannot be read against every sandbox of its namespace', () => {
    const { store: s } = store();
    deliver(s.sandboxSink, 'ADDED', {
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'Sandbox',
      metadata: { name: 'sbx-z', namespace: 'ns' },
      spec: {},
    });
    deliver(s.referenceSink, 'ADDED', ref('bad', 'sbx-a').malformed('sandbox', 42).raw());
    expect(s.unreadableReferences('ns/sbx-z')).toHaveLength(1);
    expect(s.unreadableReferences('other/sbx-z')).toHaveLength(0);
  });

  it('keeps the drain notice each readable reference carries, and its state, for the live turn to compare', () => {
    const { store: s } = store();
    const notice = { nodes: ['n1'], since: '2026-12-03T07:00:00Z', movesBy: '2026-12-03T07:05:00Z' };
    deliver(s.referenceSink, 'ADDED', ref('told', 'sbx-a').withStatus({ disruption: notice }).raw());
    deliver(s.referenceSink, 'ADDED', ref('gone', 'sbx-a').inState('Detached').raw());
    deliver(s.referenceSink, 'ADDED', ref('bad', 'sbx-a').malformed('state', 'Lost').raw());
    deliver(s.referenceSink, 'ADDED', ref('other', 'sbx-b').raw());
    expect(s.referenceNotices('ns/sbx-a')).toEqual([
      { state: 'Attached', notice: noticeKey(notice) },
      { state: 'Detached', notice: undefined },
    ]);
    // The notice removed: the record says so at once.
    deliver(s.referenceSink, 'MODIFIED', ref('told', 'sbx-a').withStatus({}).raw());
    expect(s.referenceNotices('ns/sbx-a')).toEqual([
      { state: 'Detached', notice: undefined },
      { state: 'Attached', notice: undefined },
    ]);
  });
});
