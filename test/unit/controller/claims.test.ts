// The persistent workspace's pure parts: the claim a template makes, the volumes that mount it, who holds a
// claim name, and the patches that guard, adopt, release or retain a claim.
import { describe, expect, it } from 'vitest';
import {
  claimVolumes,
  judgeClaimHolder,
  releasePatch,
  retainPatch,
  sandboxClaim,
  volumeCollision,
  type ClaimHolder,
} from '../../../operator/controller/claims.ts';
import { claimName, type VolumeClaimTemplate } from '../../../operator/api/volume-claims.ts';

const sandbox = { name: 'sbx', namespace: 'team', uid: 'sbx-uid' };
const template: VolumeClaimTemplate = {
  metadata: { name: 'work', labels: { tier: 'fast' }, annotations: { note: 'x' } },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
};
const FINALIZER = 'sandbox.agents.dev/exclusivity';
const LABEL = 'sandbox.agents.dev/sandbox';
const owner = {
  apiVersion: 'sandbox.agents.dev/v1alpha1',
  kind: 'Sandbox',
  name: 'sbx',
  uid: 'sbx-uid',
  controller: true,
  blockOwnerDeletion: true,
};

const holder = (overrides: Partial<ClaimHolder> = {}): ClaimHolder => ({
  name: 'work-sbx',
  uid: 'claim-uid',
  resourceVersion: '42',
  sandboxLabel: 'sbx',
  labelled: true,
  controller: { kind: 'Sandbox', name: 'sbx', uid: 'sbx-uid' },
  ownerReferences: [owner],
  finalizers: ['kubernetes.io/pvc-protection', FINALIZER],
  deleting: false,
  ...overrides,
});

describe('the claim a template makes', () => {
  it('is named <template>-<sandbox>, labelled, owned by the Sandbox and finalized from creation on', () => {
    expect(claimName('work', 'sbx')).toBe('work-sbx');
    const claim = sandboxClaim(sandbox, template);
    expect([claim.apiVersion, claim.kind]).toEqual(['v1', 'PersistentVolumeClaim']);
    expect(claim.metadata).toEqual({
      name: 'work-sbx',
      namespace: 'team',
      labels: { tier: 'fast', [LABEL]: 'sbx', 'app.kubernetes.io/managed-by': 'sandbox-operator' },
      annotations: { note: 'x' },
      finalizers: [FINALIZER],
      ownerReferences: [owner],
    });
    expect(claim.spec).toEqual(template.spec);
    expect(claim.spec).not.toBe(template.spec);
  });

  it('keeps the operator label over a template label of the same key', () => {
    const claim = sandboxClaim(sandbox, {
      ...template,
      metadata: { name: 'work', labels: { [LABEL]: 'other' } },
    });
    expect(claim.metadata?.labels?.[LABEL]).toBe('sbx');
    expect(claim.metadata?.annotations).toBeUndefined();
  });

  it('is mounted by the template name', () => {
    expect(claimVolumes('sbx', [template])).toEqual([
      { name: 'work', persistentVolumeClaim: { claimName: 'work-sbx' } },
    ]);
    expect(claimVolumes('sbx', [])).toEqual([]);
  });

  it('may not take the name of a pod template volume', () => {
    expect(volumeCollision([template], [{ name: 'cache' }])).toBeUndefined();
    expect(volumeCollision([template], undefined)).toBeUndefined();
    expect(volumeCollision([template], [{ name: 'cache' }, { name: 'work' }])).toEqual({
      reason: 'VolumeNameCollision',
      refused:
        'no pod is created: spec.volumeClaimTemplates names work, which spec.podTemplate.spec.volumes already uses',
      fix: 'rename the pod template volume work: the claim is mounted as a volume of that name',
    });
  });
});

describe('who holds a claim name', () => {
  it('is the sandbox itself, with nothing to repair', () => {
    expect(judgeClaimHolder(sandbox, holder())).toEqual({ kind: 'Ours' });
  });

  it('is the sandbox itself, its finalizer and label put back on the version read', () => {
    const stripped = holder({ finalizers: ['kubernetes.io/pvc-protection'], sandboxLabel: 'else' });
    expect(judgeClaimHolder(sandbox, stripped)).toEqual({
      kind: 'Ours',
      repair: [
        { op: 'test', path: '/metadata/resourceVersion', value: '42' },
        { op: 'add', path: '/metadata/labels/sandbox.agents.dev~1sandbox', value: 'sbx' },
        { op: 'add', path: '/metadata/finalizers', value: ['kubernetes.io/pvc-protection', FINALIZER] },
      ],
    });
  });

  it('gets the sandbox label beside its other labels, or the whole labels map when it has none', () => {
    expect(judgeClaimHolder(sandbox, holder({ sandboxLabel: undefined }))).toEqual({
      kind: 'Ours',
      repair: [
        { op: 'test', path: '/metadata/resourceVersion', value: '42' },
        { op: 'add', path: '/metadata/labels/sandbox.agents.dev~1sandbox', value: 'sbx' },
      ],
    });
    const judgement = judgeClaimHolder(sandbox, holder({ sandboxLabel: undefined, labelled: false }));
    expect(judgement).toEqual({
      kind: 'Ours',
      repair: [
        { op: 'test', path: '/metadata/resourceVersion', value: '42' },
        { op: 'add', path: '/metadata/labels', value: { [LABEL]: 'sbx' } },
      ],
    });
  });

  it('waits for an earlier incarnation’s claim and for one being deleted, saying which', () => {
    expect(
      judgeClaimHolder(sandbox, holder({ controller: { kind: 'Sandbox', name: 'sbx', uid: 'old' } })),
    ).toEqual({
      kind: 'Wait',
      why: 'claim work-sbx belongs to an earlier Sandbox sbx; it is released or removed first',
    });
    const going = { kind: 'Wait', why: 'claim work-sbx is being deleted; it is made again once gone' };
    expect(judgeClaimHolder(sandbox, holder({ deleting: true, finalizers: [] }))).toEqual(going);
    expect(judgeClaimHolder(sandbox, holder({ controller: undefined, deleting: true }))).toEqual(going);
  });

  it('frees a claim of ours being deleted (an override delete, a collected earlier incarnation’s) of the finalizer', () => {
    const release = [
      { op: 'test', path: '/metadata/uid', value: 'claim-uid' },
      { op: 'test', path: '/metadata/finalizers', value: ['kubernetes.io/pvc-protection', FINALIZER] },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ];
    expect(judgeClaimHolder(sandbox, holder({ deleting: true }))).toMatchObject({ kind: 'Wait', release });
    const earlier = holder({ deleting: true, controller: { kind: 'Sandbox', name: 'sbx', uid: 'old' } });
    expect(judgeClaimHolder(sandbox, earlier)).toMatchObject({ kind: 'Wait', release });
    const notYet = holder({ controller: { kind: 'Sandbox', name: 'sbx', uid: 'old' } });
    expect(judgeClaimHolder(sandbox, notYet)).not.toHaveProperty('release');
  });

  it('adopts a labelled claim with no controller (retained, or restored), on the version read', () => {
    const retained = holder({ controller: undefined, ownerReferences: [], finalizers: [] });
    const judgement = judgeClaimHolder(sandbox, retained);
    expect(judgement).toMatchObject({
      kind: 'Adopt',
      why: expect.stringMatching(
        /^claim work-sbx carries this sandbox's label and no controller .*this name, or restored/,
      ) as string,
    });
    expect(judgement.kind === 'Adopt' ? judgement.patch : []).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/metadata/ownerReferences', value: [owner] },
      { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
    ]);
  });

  it('is someone else: a misconfiguration naming the claim, its holder and the fix', () => {
    for (const [other, holderIs] of [
      [holder({ controller: undefined, sandboxLabel: undefined }), '(owned by nothing, label absent)'],
      [
        holder({ controller: { kind: 'StatefulSet', name: 'db', uid: 'x' } }),
        '(controlled by StatefulSet db, label sbx)',
      ],
      [
        holder({ controller: { kind: 'Sandbox', name: 'other', uid: 'x' } }),
        '(controlled by Sandbox other, label sbx)',
      ],
    ] as const) {
      const judgement = judgeClaimHolder(sandbox, other);
      expect(judgement).toMatchObject({
        kind: 'Taken',
        misconfiguration: { reason: 'ClaimNameTaken' },
      });
      if (judgement.kind === 'Taken') {
        expect(judgement.misconfiguration.refused).toContain('persistentvolumeclaim work-sbx');
        expect(judgement.misconfiguration.refused).toContain(holderIs);
        expect(judgement.misconfiguration.fix).toBe(
          'delete or rename persistentvolumeclaim work-sbx, or label it sandbox.agents.dev/sandbox=sbx ' +
            'and remove its controller owner reference for the sandbox to take it over',
        );
      }
    }
  });
});

describe('the release of a claim', () => {
  it('Retain: finalizer and Sandbox owner removed, other owners and finalizers kept, on the version read', () => {
    const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'k' };
    expect(retainPatch(holder({ ownerReferences: [owner, other] }))).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/metadata/ownerReferences', value: [other] },
      { op: 'add', path: '/metadata/finalizers', value: ['kubernetes.io/pvc-protection'] },
    ]);
    expect(retainPatch(holder({ ownerReferences: [], finalizers: [] }))).toBeUndefined();
    expect(retainPatch(holder({ finalizers: [] }))).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/metadata/ownerReferences', value: [] },
    ]);
  });

  it('Delete: the finalizer removed from the incarnation and list read', () => {
    expect(releasePatch(holder())).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'claim-uid' },
      { op: 'test', path: '/metadata/finalizers', value: ['kubernetes.io/pvc-protection', FINALIZER] },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
    expect(releasePatch(holder({ finalizers: [] }))).toBeUndefined();
  });
});
