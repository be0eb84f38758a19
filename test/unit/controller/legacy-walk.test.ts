/**
 * The legacy walk in its own lane (docs/deletion.md#the-legacy-walk): a turn with a due walk starts it and
 * returns without waiting for it; the walk's end enqueues the sandbox, and the next turn decides from its
 * outcome and persists it with its one status write. Walks that are held open by a gate show the turn did
 * not wait: the turn has returned while its walk is still under way.
 */
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../operator/api/objects.ts';
import type { ReconciliationOutcome } from '../../../operator/api/reconciliation-outcome.ts';
import type { ReconcilerContext } from '../../../operator/controller/context.ts';
import { reconcileDeletion } from '../../../operator/controller/deletion/turn.ts';
import { WalkLane } from '../../../operator/controller/walk-lane/lane.ts';
import type { LegacyWalk } from '../../../operator/controller/ports.ts';
import { reconcileSandbox } from '../../../operator/controller/sandbox-reconciler.ts';
import { NAMESPACE, sandbox } from '../builders.ts';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import { contextOf, expect_, failing, NOW, Script, silent } from './scripted-ports.ts';

const stats = { owners: 2, lookedUp: 1, skippedLegacy: 1, timedOut: 0, failed: 0, elapsedMs: 7 };
const foreignOwner: ReconciliationOutcome = {
  kind: 'Foreign',
  evidence: 'Reconciliation',
  owner: 'workspace_4',
  reason: 'workspace_4 holds it from worktree wt-2',
  stats,
};

/** A walk held open until the test ends it, counting how often it was started. */
class GatedWalk implements LegacyWalk {
  started = 0;
  private end: ((outcome: ReconciliationOutcome) => void) | undefined;
  run(): Promise<ReconciliationOutcome> {
    this.started += 1;
    return new Promise((resolve) => (this.end = resolve));
  }
  finish(outcome: ReconciliationOutcome): void {
    this.end?.(outcome);
  }
}

/** A context whose lane walks with `walk`, recording the status fields each write changes and each key enqueued. */
function gatedContext(subject: ReturnType<typeof sandbox>, script: Script, walk: LegacyWalk) {
  const enqueued: string[] = [];
  const statuses: Partial<NonNullable<Sandbox['status']>>[] = [];
  const decisions: string[] = [];
  const base = contextOf(subject.store(), script, { ledger: walk, onWalked: (key) => enqueued.push(key) });
  const ctx: ReconcilerContext = {
    ...base,
    ports: {
      ...base.ports,
      sandboxes: {
        ...base.ports.sandboxes,
        patchStatus: (target, before, changed) => {
          statuses.push(changed);
          return base.ports.sandboxes.patchStatus(target, before, changed);
        },
      },
    },
    recorder: { onDecision: (verdict, evidence) => decisions.push(`${verdict} by ${evidence}`) },
  };
  return { ctx, enqueued, statuses, decisions };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
const current = expect_('sandboxes.readLive(sbx)', {
  uid: 'uid-sbx',
  deleting: true,
  finalizers: [EXCLUSIVITY_FINALIZER],
});

describe('the legacy walk’s lane', () => {
  it('a deletion turn with a due walk returns without waiting for it, and the next turn decides from its outcome', async () => {
    const subject = sandbox('sbx').deleting().adopted();
    const walk = new GatedWalk();
    const script = new Script([
      current,
      current, // a turn while the walk is under way: not decided, no second walk
      current,
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('events.record(DeletionBlocked)'),
    ]);
    const { ctx, enqueued, statuses, decisions } = gatedContext(subject, script, walk);

    // The walk is still under way when the turn returns: it did not wait.
    expect(await reconcileDeletion(ctx, subject.build(), silent)).toEqual({
      kind: 'RequeueAfter',
      ms: 600_000,
    });
    expect(walk.started).toBe(1);
    expect(statuses).toEqual([]);
    expect(await reconcileDeletion(ctx, subject.build(), silent)).toEqual({
      kind: 'RequeueAfter',
      ms: 600_000,
    });
    expect(walk.started).toBe(1);
    expect(decisions).toEqual([]);

    walk.finish(foreignOwner);
    await flush();
    expect(enqueued).toEqual([`${NAMESPACE}/sbx`]);
    expect(await reconcileDeletion(ctx, subject.build(), silent)).toEqual({
      kind: 'RequeueAfter',
      ms: 30_000,
    });
    script.finish();
    expect(decisions).toEqual(['Foreign by Reconciliation']);
    // The turn's one status write persists the walk's outcome with the decision.
    expect(statuses[0]?.reconciliation).toMatchObject({ state: 'Foreign', marker: false });
    expect(statuses[0]?.decision).toMatchObject({ verdict: 'Foreign', evidence: 'Reconciliation' });
  });

  it('a live turn starts a due walk and goes on without it; the turn its end brings writes the marker', async () => {
    const subject = sandbox('sbx').finalized().adopted().withGuard();
    const walk = new GatedWalk();
    const script = new Script([expect_('sandboxes.patchStatus(sbx)'), expect_('sandboxes.patchStatus(sbx)')]);
    const { ctx, enqueued, statuses } = gatedContext(subject, script, walk);

    await reconcileSandbox(ctx, `${NAMESPACE}/sbx`, silent);
    expect(walk.started).toBe(1);
    expect(statuses[0]?.reconciliation).toMatchObject({ state: 'Pending', marker: false });

    walk.finish({ kind: 'Complete', stats });
    await flush();
    expect(enqueued).toEqual([`${NAMESPACE}/sbx`]);
    await reconcileSandbox(ctx, `${NAMESPACE}/sbx`, silent);
    script.finish();
    expect(statuses[1]?.reconciliation).toMatchObject({ state: 'Complete', marker: true });
    expect(walk.started).toBe(1);
  });

  it('walks again once a kept outcome no status write carried is as old as the retry spacing', async () => {
    // The marker review walks the ledger again at admission (controller/marker-review.ts): when its walk does not
    // complete, it refuses every status write carrying the lane's Complete. Kept for ever, that outcome would
    // freeze the status (and a deletion's decision) until the operator restarted.
    const subject = sandbox('sbx').finalized().adopted().withGuard();
    const walk = new GatedWalk();
    const refused = new KubeRequestError('PatchStatus', 'sandbox ns/sbx', 409, {
      cause: new Error(
        'admission webhook "legacy-markers.operator-review.sandbox.agents.dev" denied the request',
      ),
    });
    const script = new Script([
      expect_('sandboxes.patchStatus(sbx)'),
      failing('sandboxes.patchStatus(sbx)', refused),
      expect_('sandboxes.patchStatus(sbx)'),
    ]);
    const { ctx, statuses } = gatedContext(subject, script, walk);
    await reconcileSandbox(ctx, `${NAMESPACE}/sbx`, silent);
    walk.finish({ kind: 'Complete', stats });
    await flush();
    await expect(reconcileSandbox(ctx, `${NAMESPACE}/sbx`, silent)).rejects.toBe(refused);
    expect(walk.started).toBe(1);

    const later = { ...ctx, now: () => new Date(NOW.getTime() + ctx.timing.legacyRetryMs) };
    await reconcileSandbox(later, `${NAMESPACE}/sbx`, silent);
    script.finish();
    expect(walk.started).toBe(2);
    expect(statuses[2]?.reconciliation).toMatchObject({ marker: false });
  });

  it('an outcome lost with its operator is walked again: no marker until a status write carries one', async () => {
    const subject = sandbox('sbx').deleting().adopted();
    const first = new GatedWalk();
    const before = gatedContext(subject, new Script([current]), first);
    await reconcileDeletion(before.ctx, subject.build(), silent);
    first.finish({ kind: 'Complete', stats });
    await flush();
    expect(before.enqueued).toHaveLength(1);

    // A new operator: a fresh lane, the status as the crash left it (nothing persisted).
    const second = new GatedWalk();
    const after = gatedContext(subject, new Script([current]), second);
    expect(await reconcileDeletion(after.ctx, subject.build(), silent)).toEqual({
      kind: 'RequeueAfter',
      ms: 600_000,
    });
    expect(second.started).toBe(1);
    expect(after.decisions).toEqual([]);
  });
});

describe('the lane itself', () => {
  const lane = (walk: LegacyWalk, enqueued: string[] = []) =>
    new WalkLane(walk, {
      lanes: 2,
      now: () => new Date('2026-11-30T12:00:00Z'),
      enqueue: (k) => enqueued.push(k),
    });

  it('walks at most two sandboxes at once, and one walk per sandbox', async () => {
    const walks = new Map<string, GatedWalk>();
    const walk: LegacyWalk = {
      run: (subject) => {
        const gated = walks.get(subject.metadata.name) ?? new GatedWalk();
        walks.set(subject.metadata.name, gated);
        return gated.run();
      },
    };
    const enqueued: string[] = [];
    const walking = lane(walk, enqueued);
    const [a, b, c] = ['a', 'b', 'c'].map((name) => sandbox(name).adopted().build());
    for (const subject of [a, b, a, c]) if (subject) walking.start(subject, silent);
    expect([...walks.keys()]).toEqual(['a', 'b']);
    expect(walks.get('a')?.started).toBe(1);

    walks.get('b')?.finish({ kind: 'Complete', stats });
    await flush();
    expect(enqueued).toEqual([`${NAMESPACE}/b`]);
    expect([...walks.keys()]).toEqual(['a', 'b', 'c']);
    expect(c && walking.state(c)).toEqual({ kind: 'under-way' });
    expect(b && walking.state(b)).toMatchObject({ kind: 'finished', outcome: { kind: 'Complete' } });
  });

  it('keeps a failed walk as Unavailable (fails closed), and drops what a gone sandbox would have taken', async () => {
    const enqueued: string[] = [];
    const failing = lane(
      {
        run: () => {
          throw new Error('ledger unreachable');
        },
      },
      enqueued,
    );
    const subject = sandbox('sbx').adopted().build();
    failing.start(subject, silent);
    await flush();
    expect(failing.state(subject)).toMatchObject({
      kind: 'finished',
      outcome: { kind: 'Unavailable', reason: 'legacy walk failed: ledger unreachable' },
    });

    const gated = new GatedWalk();
    const forgetting = lane(gated, enqueued);
    forgetting.start(subject, silent);
    forgetting.forget(`${NAMESPACE}/sbx`);
    gated.finish({ kind: 'Complete', stats });
    await flush();
    expect(forgetting.state(subject)).toEqual({ kind: 'none' });
    expect(enqueued).toEqual([`${NAMESPACE}/sbx`]); // the failed walk's; the forgotten one enqueues nothing
  });

  it('answers nothing for a new incarnation under the name', () => {
    const walking = lane(new GatedWalk());
    walking.start(sandbox('sbx').adopted().build(), silent);
    const replaced = sandbox('sbx').adopted().withMetadata({ uid: 'uid-new' }).build();
    expect(walking.state(replaced)).toEqual({ kind: 'none' });
  });
});
