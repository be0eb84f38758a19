/**
 * The workspace claims in a deletion's classification: only a released sandbox's, once its pods are gone.
 */
import { describe, expect, it } from 'vitest';
import { nextDeletionStep } from '../../../operator/controller/deletion/steps.ts';
import { pod } from '../builders.ts';
import { claim, exclusive, foreign, start, walk } from './deletion-walk.ts';

describe('the workspace claims of a released sandbox', () => {
  const released = { cached: exclusive, pods: [pod('sbx', 0)] } as const;
  const tail = (steps: string[]) => steps.slice(steps.indexOf('remove-guard'));

  it('are deleted after the pods and their guard, then freed, and before the index (Delete)', () => {
    expect(
      tail(walk({ ...start, claims: 'Delete' }, { ...released, claims: [claim('a-sbx'), claim('b-sbx')] })),
    ).toEqual(['remove-guard', 'await-pods-gone']);
    // The next turn: the pods are gone.
    expect(
      walk({ ...start, claims: 'Delete' }, { cached: exclusive, claims: [claim('a-sbx'), claim('b-sbx')] }),
    ).toEqual([
      'read-incarnation',
      'gather-evidence',
      'decide',
      'confirm-live',
      'record-decision',
      'list-pods',
      'remove-guard',
      'remove-isolation',
      'list-claims',
      'delete-claim',
      'release-claim',
      'delete-claim',
      'release-claim',
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('are released and kept, never deleted (Retain)', () => {
    const steps = walk(
      { ...start, claims: 'Retain' },
      { cached: exclusive, guard: false, claims: [claim('a-sbx')] },
    );
    expect(steps.slice(steps.indexOf('list-pods'))).toEqual([
      'list-pods',
      'remove-isolation',
      'list-claims',
      'release-claim',
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('are never listed nor touched without an Exclusive verdict', () => {
    const steps = walk({ ...start, claims: 'Delete' }, { cached: foreign, claims: [claim('a-sbx')] });
    expect(steps).not.toContain('list-claims');
    expect(steps.at(-1)).toBe('blocked');
  });

  it('are not listed for a sandbox without claim templates', () => {
    expect(walk(start, { cached: exclusive })).not.toContain('list-claims');
  });

  it('skip a claim already deleting and free of the finalizer, and free a deleting one that holds it', () => {
    const going = claim('a-sbx', { deleting: true, finalizers: ['kubernetes.io/pvc-protection'] });
    const held = claim('b-sbx', { deleting: true });
    const steps = walk(
      { ...start, claims: 'Delete' },
      { cached: exclusive, guard: false, claims: [going, held] },
    );
    expect(steps.slice(steps.indexOf('list-claims'))).toEqual([
      'list-claims',
      'release-claim',
      'erase-index',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('are handled on the finishing path too (a crash after the pods went, before the claims)', () => {
    const steps = walk(
      { ...start, claims: 'Delete', released: true, final: true },
      { cached: exclusive, guard: false, isolation: false, claims: [claim('a-sbx')] },
    );
    expect(steps).toEqual([
      'list-pods',
      'list-claims',
      'delete-claim',
      'release-claim',
      'remove-finalizer',
      'finished',
    ]);
  });

  it('bind a Retain release to the version read and a Delete release to the uid and finalizers read', () => {
    const retainStep = nextDeletionStep({
      ...start,
      claims: 'Retain',
      incarnation: 'Current',
      final: true,
      livePods: [],
      liveClaims: [claim('a-sbx')],
    });
    expect(retainStep).toMatchObject({ kind: 'release-claim', retained: true });
    expect(retainStep.kind === 'release-claim' ? retainStep.patch : []).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/metadata/ownerReferences', value: [] },
      { op: 'add', path: '/metadata/finalizers', value: ['kubernetes.io/pvc-protection'] },
    ]);
    const deleteStep = nextDeletionStep({
      ...start,
      claims: 'Delete',
      incarnation: 'Current',
      final: true,
      livePods: [],
      liveClaims: [claim('a-sbx')],
      claimDeleted: true,
    });
    expect(deleteStep.kind === 'release-claim' ? deleteStep.patch : []).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-a-sbx' },
      { op: 'test', path: '/metadata/finalizers', value: claim('a-sbx').finalizers },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
  });
});
