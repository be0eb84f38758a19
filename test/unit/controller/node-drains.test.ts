import { describe, expect, it } from 'vitest';
import { NodeDrains, nodeDrainOf } from '../../../operator/controller/cache/node-drains.ts';

const node = (name: string, spec: Record<string, unknown> = {}) => ({ metadata: { name }, spec });

describe('nodeDrainOf', () => {
  it('sees a cordon, cluster-autoscaler’s and Karpenter’s removal taints, and names the autoscaler over its cordon', () => {
    expect(nodeDrainOf(node('a', { unschedulable: true }))).toEqual({ node: 'a', cause: 'Cordoned' });
    expect(
      nodeDrainOf(node('b', { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }] })),
    ).toEqual({ node: 'b', cause: 'ClusterAutoscaler' });
    expect(
      nodeDrainOf(
        node('c', { unschedulable: true, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] }),
      ),
    ).toEqual({ node: 'c', cause: 'Karpenter' });
    expect(
      nodeDrainOf(node('d', { taints: [{ key: 'karpenter.sh/disruption', value: 'disrupting' }] })),
    ).toEqual({ node: 'd', cause: 'Karpenter' });
  });

  it('sees no drain on a schedulable node with other taints, and none on something that is not a node', () => {
    expect(nodeDrainOf(node('a'))).toBeUndefined();
    expect(nodeDrainOf(node('a', { unschedulable: false }))).toBeUndefined();
    expect(
      nodeDrainOf(
        node('a', {
          taints: [
            { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
            { key: 'karpenter.sh/disruption', value: 'candidate' },
          ],
        }),
      ),
    ).toBeUndefined();
    expect(nodeDrainOf({ spec: { unschedulable: true } })).toBeUndefined();
    expect(nodeDrainOf(null)).toBeUndefined();
  });
});

describe('NodeDrains', () => {
  it('keeps only the drain of each node, and says which nodes began or ended one', () => {
    const changed: string[] = [];
    const drains = new NodeDrains((name) => changed.push(name));
    const seen = (raw: unknown) => drains.decode(raw);
    drains.replace([seen(node('a', { unschedulable: true })), seen(node('b')), seen({})]);
    expect(changed).toEqual(['a']);
    expect(drains.drainOf('a')).toEqual({ node: 'a', cause: 'Cordoned' });
    expect(drains.drainOf('b')).toBeUndefined();

    drains.apply('MODIFIED', seen(node('b')));
    drains.apply('MODIFIED', seen(node('a', { unschedulable: true })));
    expect(changed).toEqual(['a']); // no change, no word

    drains.apply('MODIFIED', seen(node('a', { taints: [{ key: 'ToBeDeletedByClusterAutoscaler' }] })));
    drains.apply('MODIFIED', seen(node('b', { unschedulable: true })));
    expect(changed).toEqual(['a', 'a', 'b']);
    expect(drains.drainOf('a')?.cause).toBe('ClusterAutoscaler');

    drains.apply('MODIFIED', seen(node('a')));
    drains.apply('DELETED', seen(node('b', { unschedulable: true })));
    expect(changed).toEqual(['a', 'a', 'b', 'a', 'b']);
    expect([drains.drainOf('a'), drains.drainOf('b')]).toEqual([undefined, undefined]);

    drains.apply('MODIFIED', seen(node('c', { unschedulable: true })));
    drains.replace([seen(node('d', { unschedulable: true }))]);
    expect(changed.slice(5)).toEqual(['c', 'c', 'd']);
  });
});
