/**
 * Lifecycle features against the real API server: legacy reconciliation over HTTP (marker earned, foreign owner
 * blocks, each session of an owner located, a recorded allocation blocks), adopted sandboxes without a ledger failing closed, automatic cleanup after the TTL, the capacity
 * latch and the administrator's erase, and the metrics endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER, GROUP, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import { rfc3339 } from '../../../operator/controller/conditions.ts';
import { kubectl, testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteSandbox,
  getSandbox,
  sandboxManifest,
  untilSandbox,
  sandboxGone,
  sandboxSeen,
} from './fixtures.ts';
import { LedgerServer } from './ledger-server.ts';
import {
  core,
  customObjects,
  eventually,
  pending,
  grantOperatorRbac,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('lifecycle');
const adopted = { [ANNOTATIONS.adoptedFrom]: 'cloud-agent v1 (pre-index)' };
const ledger = new LedgerServer(
  {
    owners: {
      'legacy-clear': [{ session: 'agent_1' }, { session: 'workspace_2', worktree: 'wt-1' }],
      'legacy-foreign': [{ session: 'agent_3' }, { session: 'workspace_4', worktree: 'wt-2' }],
      // Issue 25 item 3: a delegate holds the sandbox while the root holds nothing (not-allocated).
      'legacy-delegate': [
        { session: 'workspace_6', sessions: ['workspace_6', 'workspace_7'], worktree: 'wt-2' },
      ],
      // ... and a recorded allocation of the sandbox blocks though the locator says not-allocated.
      'legacy-recorded': [
        {
          session: 'workspace_8',
          worktree: 'wt-2',
          allocation: { sandbox: 'legacy-recorded', provider: 'kubernetes' },
        },
      ],
    },
    locations: {
      workspace_2: { state: 'located', sandbox: 'legacy-clear', provider: 'kubernetes', worktree: 'wt-1' },
      workspace_4: { state: 'located', sandbox: 'legacy-foreign', provider: 'kubernetes', worktree: 'wt-2' },
      workspace_6: { state: 'not-allocated' },
      workspace_7: { state: 'located', sandbox: 'legacy-delegate', provider: 'kubernetes', worktree: 'wt-2' },
      workspace_8: { state: 'not-allocated' },
    },
  },
  'ledger-secret',
);
let operator: RunningOperator;

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace, await ledger.operatorFlags());
});
afterAll(async () => {
  await operator.stop();
  await ledger.stop();
});

const status = async (name: string) => (await getSandbox(namespace, name))?.status;
const gone = (name: string) => sandboxGone(namespace, name, 60_000);

describe('legacy reconciliation', () => {
  it('earns the marker for an adopted sandbox no foreign owner holds, and then decides from the index', async () => {
    await createSandbox(namespace, 'legacy-clear', { worktree: 'wt-1', annotations: adopted });
    const reconciled = await eventually('marker earned', async () => {
      const current = await status('legacy-clear');
      return current?.reconciliation?.marker ? current : pending({ reconciliation: current?.reconciliation });
    });
    expect(reconciled.reconciliation).toMatchObject({ state: 'Complete', marker: true });
    expect(reconciled.conditions?.find((c) => c.type === 'ReferencesReconciled')).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
    });
    // The legacy owner agent_1 was not looked up; the control-plane owner was.
    expect(ledger.requests).toContain('/v1/sessions/workspace_2/runtime');
    expect(ledger.requests).not.toContain('/v1/sessions/agent_1/runtime');
    await deleteSandbox(namespace, 'legacy-clear');
    await gone('legacy-clear');
  });

  it('keeps an adopted sandbox whose owner holds it from another worktree', async () => {
    await createSandbox(namespace, 'legacy-foreign', { worktree: 'wt-1', annotations: adopted });
    await untilSandbox(
      namespace,
      'legacy-foreign',
      'walk finished',
      (s) => s.status?.reconciliation?.state === 'Foreign',
    );
    await deleteSandbox(namespace, 'legacy-foreign');
    const blocked = await eventually('blocked', async () => {
      const current = await status('legacy-foreign');
      return current?.phase === 'Blocked'
        ? current
        : pending({ phase: current?.phase, decision: current?.decision });
    });
    expect(blocked.decision).toMatchObject({ verdict: 'Foreign', evidence: 'Reconciliation' });
    expect(blocked.reconciliation?.marker).toBe(false);
  });

  it('locates each session of an owner, and blocks on a recorded allocation whatever the locator says', async () => {
    await createSandbox(namespace, 'legacy-delegate', { worktree: 'wt-1', annotations: adopted });
    await createSandbox(namespace, 'legacy-recorded', { worktree: 'wt-1', annotations: adopted });
    const walked = (name: string) =>
      untilSandbox(
        namespace,
        name,
        `${name}'s walk finished`,
        (s) => s.status?.reconciliation?.state === 'Foreign',
      );
    const delegate = await walked('legacy-delegate');
    expect(delegate.status?.reconciliation).toMatchObject({
      marker: false,
      message: expect.stringContaining(
        'owner workspace_6 holds the sandbox through session workspace_7 from worktree wt-2',
      ),
    });
    expect(ledger.requests).toContain('/v1/sessions/workspace_6/runtime');
    expect(ledger.requests).toContain('/v1/sessions/workspace_7/runtime');
    const recorded = await walked('legacy-recorded');
    expect(recorded.status?.reconciliation).toMatchObject({
      marker: false,
      message: expect.stringContaining(
        'owner workspace_8 has a recorded allocation of kubernetes/legacy-recorded',
      ),
    });
    // The recorded allocation decides without a lookup.
    expect(ledger.requests).not.toContain('/v1/sessions/workspace_8/runtime');
  });
});

describe('automatic cleanup', () => {
  it('deletes an unreferenced sandbox after its TTL, through the same decision', async () => {
    await createSandbox(namespace, 'ephemeral', {
      worktree: 'wt-1',
      cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 2 },
    });
    await createReference(namespace, 'ephemeral-user', {
      sandbox: 'ephemeral',
      session: 'workspace_9',
      worktree: 'wt-1',
    });
    const referenced = await eventually('referenced', async () => {
      const current = await status('ephemeral');
      return current?.references?.attached === 1 ? current : pending({ references: current?.references });
    });
    // While referenced no cleanup clock runs: the status the cleanup reads has no start for it.
    expect(referenced.unreferencedSince).toBeUndefined();
    const referenceDeletedAt = rfc3339(new Date());
    await customObjects().deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: 'sessionreferences',
      name: 'ephemeral-user',
    });
    await gone('ephemeral');
    // The clock that deleted it started only once the reference was gone: the reference held it until then.
    const started = await eventually('the CleanupStarted Event', async () => {
      const events = await core().listNamespacedEvent({
        namespace,
        fieldSelector: 'involvedObject.name=ephemeral,reason=CleanupStarted',
      });
      return events.items[0]?.message ?? pending({ events: events.items.length });
    });
    const since = /^no reference since (\S+); deleting$/.exec(started)?.[1] ?? '';
    expect(
      since >= referenceDeletedAt,
      `cleanup clock started at ${since}, before ${referenceDeletedAt}`,
    ).toBe(true);
  });

  it('keeps a Retain sandbox with no reference', async () => {
    await createSandbox(namespace, 'kept', {
      worktree: 'wt-1',
      cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 1 },
    });
    const kept = await eventually('status written', async () => {
      const current = await status('kept');
      return current?.unreferencedSince ? current : pending({ status: current });
    });
    // A control unreferenced no earlier than `kept`, with the same TTL: once cleanup has taken it, the
    // operator's clock is past kept's TTL too.
    await createSandbox(namespace, 'kept-control', {
      worktree: 'wt-1',
      cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 1 },
    });
    await gone('kept-control');
    // A spec change brings a turn after that; the turn records its generation only past the cleanup step.
    const touched = await customObjects().patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        name: 'kept',
        body: [{ op: 'add', path: '/spec/podTemplate/metadata', value: { labels: { touched: 'yes' } } }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const generation = (touched as { metadata: { generation: number } }).metadata.generation;
    await eventually('a turn of the touched generation', async () => {
      const current = await status('kept');
      return current?.observedGeneration === generation
        ? true
        : pending({ observed: current?.observedGeneration });
    });
    expect(kept.unreferencedSince).toBeDefined();
    expect((await getSandbox(namespace, 'kept'))?.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('an adopted sandbox without a ledger', () => {
  const other = testNamespace('no-ledger');
  let plain: RunningOperator;
  beforeAll(() => {
    plain = startOperator(other);
  });
  afterAll(async () => {
    await plain.stop();
  });

  it('fails closed with a condition saying why', async () => {
    await createSandbox(other, 'orphan', { worktree: 'wt-1', annotations: adopted });
    const { status: current } = await untilSandbox(
      other,
      'orphan',
      'status',
      (s) => s.status?.reconciliation !== undefined,
    );
    expect(current?.reconciliation).toMatchObject({ state: 'NotConfigured', marker: false });
    expect(current?.conditions?.find((c) => c.type === 'ReferencesReconciled')?.message).toContain(
      '--ledger-url',
    );
    await deleteSandbox(other, 'orphan');
    const { status: blocked } = await untilSandbox(
      other,
      'orphan',
      'blocked',
      (s) => s.status?.phase === 'Blocked',
    );
    expect(blocked?.decision).toMatchObject({ verdict: 'Unavailable', evidence: 'Ledger' });
  });

  it('stays adopted when its annotation is removed or replaced away: only a walk sets the marker', async () => {
    for (const [name, strip] of [
      ['annotation-removed', ['annotate', 'sandbox', 'annotation-removed', `${ANNOTATIONS.adoptedFrom}-`]],
      ['replaced', ['replace', '-f', '-']],
    ] as const) {
      await createSandbox(other, name, { worktree: 'wt-1', annotations: adopted });
      await untilSandbox(
        other,
        name,
        'unmarked status',
        (sandbox) => sandbox.status?.reconciliation?.state === 'NotConfigured',
      );
      // The replacement has no annotation; it carries the live finalizers, as the guard-protection policy
      // requires of a replace (test/integration/admission/guard-protection.test.ts).
      // The operator may write the sandbox between our read and the replace (its pod came up): like a GitOps
      // tool, read again and replace again on a Conflict.
      const manifest = sandboxManifest(other, name, { worktree: 'wt-1' });
      await eventually(`${name} stripped`, async () => {
        const live = (await getSandbox(other, name))?.metadata;
        const metadata = {
          ...manifest.metadata,
          resourceVersion: live?.resourceVersion ?? '',
          finalizers: live?.finalizers ?? [],
        };
        const input = JSON.stringify({ ...manifest, metadata });
        const result = await kubectl([...strip, '-n', other], { input });
        if (result.exitCode === 0) return true;
        if (result.stderr.includes('Conflict')) return pending({ conflict: result.stderr.trim() });
        throw new Error(`kubectl ${strip.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
      });
      expect(
        (await getSandbox(other, name))?.metadata.annotations?.[ANNOTATIONS.adoptedFrom],
      ).toBeUndefined();
      await untilSandbox(
        other,
        name,
        'the finalizer back',
        (sandbox) => sandbox.metadata.finalizers?.includes(EXCLUSIVITY_FINALIZER) === true,
      );
      await deleteSandbox(other, name);
      const blocked = await eventually(`${name} blocked`, async () => {
        const current = await getSandbox(other, name);
        if (current === undefined) throw new Error(`${name} was destroyed without a legacy walk`);
        return current.status?.phase === 'Blocked' ? current.status : pending(sandboxSeen(current));
      });
      expect(blocked.decision).toMatchObject({ verdict: 'Unavailable', evidence: 'Ledger' });
      expect(blocked.reconciliation?.marker).toBe(false);
    }
  });
});

describe('the capacity latch', () => {
  it('fails closed past 512 references and releases only after an explicit erase', async () => {
    await createSandbox(namespace, 'crowded', { worktree: 'wt-1', onNode: false });
    for (let i = 0; i < 513; i += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, 513 - i) }, (_, j) =>
          createReference(namespace, `crowd-${i + j}`, {
            sandbox: 'crowded',
            session: `workspace_${i + j}`,
            worktree: 'wt-1',
          }),
        ),
      );
    }
    const overflowed = await eventually(
      'overflowed',
      async () => {
        const current = await status('crowded');
        return current?.capacity?.overflowed ? current : pending({ capacity: current?.capacity });
      },
      60_000,
    );
    expect(overflowed.capacity).toMatchObject({ limit: 'References', observed: 513, max: 512 });
    expect(overflowed.conditions?.find((c) => c.type === 'CapacityExceeded')).toMatchObject({
      status: 'True',
      reason: 'ReferencesExceeded',
    });
    await deleteSandbox(namespace, 'crowded');
    const { status: blocked } = await untilSandbox(
      namespace,
      'crowded',
      'blocked',
      (s) => s.status?.phase === 'Blocked',
    );
    expect(blocked?.decision?.verdict).toBe('Overflowed');
    await customObjects().patchNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: SANDBOX.plural,
      name: 'crowded',
      body: [
        {
          op: 'add',
          path: `/metadata/annotations`,
          value: { [ANNOTATIONS.eraseReferences]: 'INC-7 overflow' },
        },
      ],
    });
    await gone('crowded');
  });
});

describe('metrics', () => {
  it('count reconciles and decisions by verdict', async () => {
    const port = await operator.port;
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/controller_runtime_reconcile_total\{controller="sandbox",result="[a-z_]+"\} [1-9]/);
    expect(text).toMatch(
      /sandbox_operator_decisions_total\{verdict="Foreign",evidence="Reconciliation"\} [1-9]/,
    );
    expect(text).toMatch(/sandbox_operator_legacy_reconciliations_total\{outcome="Complete"\} [1-9]/);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  });
});
