import { describe, expect, it } from 'vitest';
import { BindingCache } from '../../../../operator/controller/binding/cache.ts';

const claim = (name: string, extra: object = {}) => ({
  metadata: { name, namespace: 'team-a', uid: `${name}-uid`, ...extra },
  spec: { warmPoolRef: { name: 'pool' }, session: 's', route: 'r', role: 'Root' },
});
const sandbox = (name: string, labels: Record<string, string>) => ({
  metadata: { name, namespace: 'team-a', labels },
});
const POOL = 'sandbox.agents.dev/warm-pool';
const CLAIM = 'sandbox.agents.dev/sandbox-claim';

function cache() {
  const queued: string[] = [];
  let now = 1_000;
  const store = new BindingCache(
    (key) => queued.push(key),
    () => now,
  );
  return { store, queued, later: (ms: number) => (now += ms) };
}

describe('the binding cache', () => {
  it('keeps claims, brings their turn on a change, and remembers when each was first seen', () => {
    const { store, queued, later } = cache();
    const { claimSink } = store;
    claimSink.replace([claimSink.decode(claim('c-1'))]);
    expect(queued).toEqual(['team-a/c-1']);
    later(50);
    claimSink.apply('MODIFIED', claimSink.decode(claim('c-1', { resourceVersion: '2' })));
    expect(store.claim('team-a/c-1')?.resourceVersion).toBe('2');
    expect(store.firstSeen('team-a/c-1')).toBe(1_000);
    claimSink.apply('DELETED', claimSink.decode(claim('c-1')));
    expect(store.claim('team-a/c-1')).toBeUndefined();
    expect(store.firstSeen('team-a/c-1')).toBeUndefined();
    expect(store.claimKeys()).toEqual([]);
    // An object without name or namespace is ignored.
    claimSink.apply('ADDED', claimSink.decode({ metadata: {} }));
    expect(queued).toEqual(['team-a/c-1', 'team-a/c-1']);
  });

  it('indexes pool sandboxes by pool, and a bound sandbox’s change brings its claim’s turn', () => {
    const { store, queued } = cache();
    const { poolSandboxSink: pooled, claimedSandboxSink: claimed } = store;
    pooled.replace([
      pooled.decode(sandbox('p-1', { [POOL]: 'pool' })),
      pooled.decode(sandbox('p-2', { [POOL]: 'pool' })),
    ]);
    expect(
      store
        .poolSandboxes('team-a', 'pool')
        .map((s) => s.name)
        .sort(),
    ).toEqual(['p-1', 'p-2']);
    expect(store.poolSandboxes('team-b', 'pool')).toEqual([]);
    expect(queued).toEqual([]);
    const bound = sandbox('p-1', { [POOL]: 'pool', [CLAIM]: 'c-1' });
    pooled.apply('MODIFIED', pooled.decode(bound));
    claimed.apply('ADDED', claimed.decode(bound));
    expect(queued).toEqual(['team-a/c-1']);
    expect(store.sandbox('team-a', 'p-1')?.claim).toBe('c-1');
    // Moved to another pool (a new incarnation): indexed there only.
    pooled.apply('MODIFIED', pooled.decode(sandbox('p-2', { [POOL]: 'other' })));
    expect(store.poolSandboxes('team-a', 'pool').map((s) => s.name)).toEqual(['p-1']);
    expect(store.poolSandboxes('team-a', 'other').map((s) => s.name)).toEqual(['p-2']);
    claimed.apply('DELETED', claimed.decode(bound));
    expect(queued).toEqual(['team-a/c-1', 'team-a/c-1']);
    expect(store.sandbox('team-a', 'p-1')?.claim).toBe('c-1'); // still a pool sandbox until its pool watch says
    pooled.replace([]);
    expect(store.sandbox('team-a', 'p-1')).toBeUndefined();
    expect(store.poolSandboxes('team-a', 'pool')).toEqual([]);
    expect(store.counts).toEqual({ claims: 0, sandboxes: 0 });
  });

  it('keeps pools’ identity; a pool that appears (or is recreated) brings the unbound claims naming it', () => {
    const { store, queued } = cache();
    const { claimSink, poolSink } = store;
    const pool = (uid: string, extra: object = {}) => ({
      metadata: { name: 'pool', namespace: 'team-a', uid, ...extra },
      spec: { templateRef: { name: 't' } },
    });
    claimSink.replace([
      claimSink.decode(claim('waiting')),
      claimSink.decode({ ...claim('bound'), status: { sandbox: 'p-1' } }),
      claimSink.decode({ ...claim('other-pool'), spec: { warmPoolRef: { name: 'other' } } }),
      claimSink.decode({ ...claim('elsewhere'), metadata: { name: 'elsewhere', namespace: 'team-b' } }),
    ]);
    queued.length = 0;
    poolSink.apply('ADDED', poolSink.decode(pool('u-1')));
    expect(store.pool('team-a', 'pool')).toEqual({
      namespace: 'team-a',
      name: 'pool',
      uid: 'u-1',
      templateName: 't',
      deleting: false,
    });
    expect(queued).toEqual(['team-a/waiting']);
    // Its status changing (the same pool) brings nobody; its deletion starting is kept (bind.ts refuses it).
    poolSink.apply('MODIFIED', poolSink.decode(pool('u-1', { deletionTimestamp: '2026-12-03T07:00:00Z' })));
    expect(queued).toEqual(['team-a/waiting']);
    expect(store.pool('team-a', 'pool')?.deleting).toBe(true);
    poolSink.apply('DELETED', poolSink.decode(pool('u-1')));
    expect(store.pool('team-a', 'pool')).toBeUndefined();
    poolSink.replace([poolSink.decode(pool('u-2'))]);
    expect(queued).toEqual(['team-a/waiting', 'team-a/waiting']);
    expect(store.pool('team-b', 'pool')).toBeUndefined();
  });
});
