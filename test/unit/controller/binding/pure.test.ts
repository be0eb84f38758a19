import { describe, expect, it } from 'vitest';
import {
  bindingPatch,
  CLEANUP_FENCE_PATH,
  CLAIM_LABEL_PATH,
  pointerToken,
} from '../../../../operator/controller/binding/binding-patch.ts';
import {
  chooseWarmSandbox,
  isWarmCandidate,
  poolOwnerIndex,
  spread,
} from '../../../../operator/controller/binding/choice.ts';
import { bindingSandboxOf, claimRecordOf } from '../../../../operator/controller/binding/records.ts';
import {
  coldSandboxBody,
  coldSandboxName,
  referenceBody,
} from '../../../../operator/controller/binding/bodies.ts';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import { claimRecord, POOL, poolSandbox } from './fixtures.ts';

describe('choosing a pool sandbox', () => {
  it('takes only a ready, unclaimed, undeleted, unfenced sandbox the pool controls', () => {
    expect(isWarmCandidate(poolSandbox('a'), POOL)).toBe(true);
    expect(isWarmCandidate(poolSandbox('a', { claim: 'other' }), POOL)).toBe(false);
    expect(isWarmCandidate(poolSandbox('a', { deleting: true }), POOL)).toBe(false);
    expect(isWarmCandidate(poolSandbox('a', { fenced: true }), POOL)).toBe(false);
    expect(isWarmCandidate(poolSandbox('a', { ready: { status: 'False' } }), POOL)).toBe(false);
    expect(isWarmCandidate(poolSandbox('a', { pool: 'other-pool' }), POOL)).toBe(false);
    expect(isWarmCandidate(poolSandbox('a', { owners: [] }), POOL)).toBe(false);
    // A same-named pool's sandbox from before (another uid) is not this pool's.
    expect(isWarmCandidate(poolSandbox('a'), { name: POOL.name, uid: 'newer' })).toBe(false);
    const notController = poolSandbox('a').owners.map((o) => ({ ...o, controller: false }));
    expect(isWarmCandidate(poolSandbox('a', { owners: notController }), POOL)).toBe(false);
    const otherKind = poolSandbox('a').owners.map((o) => ({ ...o, kind: 'ReplicaSet' }));
    expect(isWarmCandidate(poolSandbox('a', { owners: otherKind }), POOL)).toBe(false);
  });

  it('finds the pool owner among other owners', () => {
    const owners = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'x', controller: false },
      ...poolSandbox('a').owners,
    ];
    expect(poolOwnerIndex(poolSandbox('a', { owners }), POOL)).toBe(1);
    expect(poolOwnerIndex(poolSandbox('a', { owners: [] }), POOL)).toBeUndefined();
  });

  it('spreads claims over the candidates by their uid, and skips the ones tried', () => {
    const sandboxes = ['c', 'a', 'd', 'b'].map((name) => poolSandbox(name));
    const sorted = ['a', 'b', 'c', 'd'];
    for (const uid of ['u1', 'u2', 'u3', 'u4', 'u5']) {
      expect(chooseWarmSandbox(sandboxes, POOL, uid, new Set())?.name).toBe(sorted[spread(uid) % 4]);
    }
    const picks = new Set(
      ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8'].map(
        (uid) => chooseWarmSandbox(sandboxes, POOL, uid, new Set())?.name,
      ),
    );
    expect(picks.size).toBeGreaterThan(1);
    const first = chooseWarmSandbox(sandboxes, POOL, 'u1', new Set())?.name ?? '';
    const next = chooseWarmSandbox(sandboxes, POOL, 'u1', new Set([first]));
    expect(next?.name).not.toBe(first);
    expect(chooseWarmSandbox(sandboxes, POOL, 'u1', new Set(sorted))).toBeUndefined();
    expect(chooseWarmSandbox([poolSandbox('x', { claim: 'c' })], POOL, 'u1', new Set())).toBeUndefined();
  });

  it('spread is the first 32 bits of sha256 of the uid', () => {
    // sha256("") = e3b0c442...
    expect(spread('')).toBe(0xe3b0c442);
  });
});

describe('the binding patch', () => {
  it('tests the incarnation, the label absent and both fences down, adds the label and drops the pool owner', () => {
    expect(pointerToken('a/b~c')).toBe('a~1b~0c');
    expect(CLAIM_LABEL_PATH).toBe('/metadata/labels/sandbox.agents.dev~1sandbox-claim');
    expect(CLEANUP_FENCE_PATH).toBe('/metadata/annotations/sandbox.agents.dev~1cleanup-fence');
    expect(bindingPatch({ uid: 'u', poolOwner: { index: 1, uid: 'p' } }, 'claim-1')).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'u' },
      { op: 'test', path: CLAIM_LABEL_PATH, value: null },
      { op: 'test', path: '/metadata/deletionTimestamp', value: null },
      { op: 'test', path: CLEANUP_FENCE_PATH, value: null },
      { op: 'add', path: CLAIM_LABEL_PATH, value: 'claim-1' },
      { op: 'test', path: '/metadata/ownerReferences/1/uid', value: 'p' },
      { op: 'remove', path: '/metadata/ownerReferences/1' },
    ]);
  });
});

describe('records', () => {
  it('reads a pool sandbox: labels, owners, fences and Ready', () => {
    const raw = {
      metadata: {
        name: 'p-1',
        namespace: 'team-a',
        uid: 'u',
        resourceVersion: '7',
        creationTimestamp: 't',
        labels: {
          'sandbox.agents.dev/warm-pool': 'pool',
          'sandbox.agents.dev/sandbox-claim': 'c',
          'sandbox.agents.dev/template': 't',
        },
        ownerReferences: [
          { apiVersion: 'a', kind: 'SandboxWarmPool', name: 'pool', uid: 'pu', controller: true },
          { kind: 1 },
        ],
        deletionTimestamp: 'now',
      },
      status: {
        conditions: [{ type: 'Ready', status: 'False', reason: 'PodsPending', message: 'm' }, { type: 'X' }],
      },
    };
    expect(bindingSandboxOf(raw)).toEqual({
      namespace: 'team-a',
      name: 'p-1',
      uid: 'u',
      resourceVersion: '7',
      creationTimestamp: 't',
      pool: 'pool',
      claim: 'c',
      template: 't',
      owners: [
        { apiVersion: 'a', kind: 'SandboxWarmPool', name: 'pool', uid: 'pu', controller: true },
        { apiVersion: '', kind: '', name: '', uid: '', controller: false },
      ],
      deleting: true,
      fenced: false,
      ready: { status: 'False', reason: 'PodsPending', message: 'm' },
    });
  });

  it('reads a fence it cannot read as fenced, a null deletionTimestamp as none, no Ready as Unknown', () => {
    const base = { name: 'p', namespace: 'n' };
    expect(bindingSandboxOf({ metadata: { ...base, annotations: 'x' } })?.fenced).toBe(true);
    expect(
      bindingSandboxOf({ metadata: { ...base, annotations: { 'sandbox.agents.dev/cleanup-fence': 't' } } })
        ?.fenced,
    ).toBe(true);
    expect(bindingSandboxOf({ metadata: { ...base, annotations: { other: 'x' } } })?.fenced).toBe(false);
    expect(bindingSandboxOf({ metadata: { ...base, annotations: null } })?.fenced).toBe(false);
    expect(bindingSandboxOf({ metadata: { ...base, deletionTimestamp: null } })?.deleting).toBe(false);
    expect(bindingSandboxOf({ metadata: base })?.ready).toEqual({ status: 'Unknown', reason: 'NotObserved' });
    expect(bindingSandboxOf({ metadata: { name: 'p' } })).toBeUndefined();
    expect(bindingSandboxOf(null)).toBeUndefined();
  });

  it('reads a claim: spec, status and finalizers', () => {
    const raw = {
      metadata: {
        name: 'c',
        namespace: 'n',
        uid: 'u',
        resourceVersion: '3',
        generation: 2,
        finalizers: ['f', 3],
        creationTimestamp: 't',
      },
      spec: {
        warmPoolRef: { name: 'pool' },
        templateRef: { name: 7 },
        session: 's',
        worktree: 'w',
        route: 'r',
        role: 'Root',
        parentSession: 'p',
      },
      status: {
        observedGeneration: 2,
        sandbox: 'sb',
        reference: 'ref',
        launchType: 'Warm',
        boundAt: 'b',
        conditions: [
          {
            type: 'Bound',
            status: 'True',
            reason: 'r',
            message: 'm',
            lastTransitionTime: 'l',
            observedGeneration: 2,
          },
        ],
      },
    };
    expect(claimRecordOf(raw)).toEqual({
      namespace: 'n',
      name: 'c',
      uid: 'u',
      resourceVersion: '3',
      generation: 2,
      creationTimestamp: 't',
      deleting: false,
      finalizers: ['f'],
      spec: {
        warmPoolRef: { name: 'pool' },
        session: 's',
        worktree: 'w',
        route: 'r',
        role: 'Root',
        parentSession: 'p',
      },
      status: {
        observedGeneration: 2,
        sandbox: 'sb',
        reference: 'ref',
        launchType: 'Warm',
        boundAt: 'b',
        conditions: [
          {
            type: 'Bound',
            status: 'True',
            reason: 'r',
            message: 'm',
            lastTransitionTime: 'l',
            observedGeneration: 2,
          },
        ],
      },
    });
    const bare = claimRecordOf({
      metadata: { name: 'c', namespace: 'n', deletionTimestamp: 'x' },
      status: { launchType: 'Lukewarm' },
    });
    expect(bare).toMatchObject({
      uid: '',
      generation: 0,
      deleting: true,
      finalizers: [],
      status: { conditions: [] },
    });
    expect(bare?.status.launchType).toBeUndefined();
    expect(claimRecordOf({ metadata: { namespace: 'n' } })).toBeUndefined();
  });
});

describe('what a binding creates', () => {
  it('a reference under the client’s name, labelled with the claim, with the claim’s session fields', () => {
    const body = referenceBody(claimRecord(), 'python-pool-x7k2q');
    expect(body.metadata).toEqual({
      name: sessionReferenceName('python-pool-x7k2q', 'workspace_1'),
      namespace: 'team-a',
      labels: { 'sandbox.agents.dev/sandbox-claim': 'claim-1' },
    });
    expect(body.spec).toEqual({
      sandbox: 'python-pool-x7k2q',
      session: 'workspace_1',
      worktree: 'wt-1',
      route: 'shared-control-v1/r',
      role: 'Root',
      state: 'Attached',
    });
    const subagent = claimRecord({
      spec: { templateRef: { name: 't' }, session: 's', route: 'r', role: 'Subagent', parentSession: 'p' },
    });
    expect(referenceBody(subagent, 'x').spec).toEqual({
      sandbox: 'x',
      session: 's',
      route: 'r',
      role: 'Subagent',
      parentSession: 'p',
      state: 'Attached',
    });
  });

  it('a cold sandbox: the template’s spec, the claim and template labels, the generation, our finalizer, no pool owner', () => {
    const body = coldSandboxBody(
      claimRecord(),
      'python-agent',
      { generation: 3, spec: { podTemplate: { spec: {} } } },
      'abcde',
    );
    expect(body).toEqual({
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'Sandbox',
      metadata: {
        name: 'claim-1-abcde',
        namespace: 'team-a',
        labels: {
          'sandbox.agents.dev/sandbox-claim': 'claim-1',
          'sandbox.agents.dev/template': 'python-agent',
        },
        annotations: { 'sandbox.agents.dev/template-generation': '3' },
        // Born with it: the claim may be deleted (and its sandbox with it) before the Sandbox reconciler's
        // first turn, and a Sandbox without it would go at once, with no decision (soak seed 20261228).
        finalizers: ['sandbox.agents.dev/exclusivity'],
      },
      spec: { podTemplate: { spec: {} } },
    });
  });

  it('a cold sandbox’s name is a DNS label however long the claim’s', () => {
    const name = coldSandboxName(`${'a'.repeat(56)}-${'b'.repeat(10)}`, 'abcde');
    expect(name).toBe(`${'a'.repeat(56)}-abcde`);
    expect(coldSandboxName('x'.repeat(80), 'abcde')).toHaveLength(63);
  });
});
