/**
 * Issue 27's judgements must be able to fail: a suspension lets the operator stop a live sandbox's pods, and
 * only while the spec suspends it; a workspace claim goes only after an Exclusive verdict or with its
 * namespace.
 */
import { describe, expect, it } from 'vitest';
import type { TimedEvent } from '../../soak/audit-log.ts';
import { checkSequence } from '../../soak/invariants.ts';
import { SoakModel, type OpRecord } from '../../soak/model.ts';
import { ATTACH_LAG_MS, DRAIN_LAG_MS, SUSPEND_LAG_MS } from '../../soak/workspace.ts';
import { event, NS, op, OPERATOR, sandbox } from './audit-fixtures.ts';

const signatures = (model: SoakModel, events: TimedEvent[]) =>
  checkSequence(model, events, OPERATOR).map((v) => v.signature);

/** A version of Sandbox sbx-a as a write's answer recorded it: its operating mode, its decision. */
function version(
  at: number,
  by: string | OpRecord,
  over: { operatingMode?: string; verdict?: string; deleting?: boolean } = {},
): TimedEvent {
  return event(at, 'patch', 'sandboxes', 'sbx-a', 200, by, {
    responseObject: {
      kind: 'Sandbox',
      metadata: {
        name: 'sbx-a',
        uid: 'uid-a',
        ...(over.deleting ? { deletionTimestamp: new Date(at).toISOString() } : {}),
      },
      spec: { operatingMode: over.operatingMode ?? 'Running' },
      ...(over.verdict === undefined ? {} : { status: { decision: { verdict: over.verdict } } }),
    },
  });
}

const setMode = (model: SoakModel, at: number, mode: 'Suspended' | 'Running') =>
  version(at, op(model, mode === 'Suspended' ? 'suspend' : 'resume', at - 1, at + 9, { sandbox: 'sbx-a' }), {
    operatingMode: mode,
  });

const podStop = (at: number, by: string | OpRecord = OPERATOR) =>
  event(at, 'delete', 'pods', 'sbx-a-0', 200, by);

const claimDelete = (at: number, by: string | OpRecord = OPERATOR) =>
  event(at, 'delete', 'persistentvolumeclaims', 'workspace-sbx-a', 200, by);

describe('a suspension', () => {
  const model = () => new SoakModel(NS, [], [sandbox({ workspace: true })]);

  it('lets the operator stop a live sandbox’s pods once the spec that suspends it is stored', () => {
    const m = model();
    expect(signatures(m, [setMode(m, 1000, 'Suspended'), podStop(1200)])).toEqual([]);
  });

  it('counts from the suspension’s arrival: the watch can bring it before the API server completes the answer', () => {
    // Seed 20261327: the operator stopped the pod on the watch event of the stored suspension, before the
    // user's PATCH was answered (the audit's stageTimestamp) — the pod stop lies inside the write's span.
    const m = model();
    const slow = {
      ...setMode(m, 1000, 'Suspended'),
      stageTimestamp: new Date(1400).toISOString(),
      completed: 1400,
    };
    expect(signatures(m, [slow, podStop(1200)])).toEqual([]);
  });

  it('permits nothing before the suspension is stored, nor to anyone but the operator', () => {
    const m = model();
    expect(signatures(m, [podStop(900), setMode(m, 1000, 'Suspended')])).toEqual([
      'no-wrongful-stop/operator/live',
    ]);
    const n = model();
    const user = op(n, 'delete-pod', 1199, 1210, { sandbox: 'sbx-a' });
    expect(signatures(n, [setMode(n, 1000, 'Suspended'), podStop(1200, user)])).toEqual([
      'no-wrongful-stop/delete-pod/live',
    ]);
  });

  it('ends a lag after the resume is stored: the operator’s cache may show it a moment late, no longer', () => {
    const stopAfterResume = (ms: number) => {
      const m = model();
      return signatures(m, [setMode(m, 1000, 'Suspended'), setMode(m, 2000, 'Running'), podStop(2001 + ms)]);
    };
    expect(stopAfterResume(SUSPEND_LAG_MS - 100)).toEqual([]);
    expect(stopAfterResume(SUSPEND_LAG_MS + 100)).toEqual(['no-wrongful-stop/operator/live']);
  });
});

/** The operator's DELETE of pod sbx-a-0, answered with the pod as it ran on `node`. */
const podMoved = (at: number, node: string, by: string | OpRecord = OPERATOR) =>
  event(at, 'delete', 'pods', 'sbx-a-0', 200, by, {
    responseObject: { kind: 'Pod', metadata: { name: 'sbx-a-0' }, spec: { nodeName: node } },
  });

describe('a drain', () => {
  const drain = (m: SoakModel, from: number, until: number) =>
    op(m, 'drain', from, until, { node: 'node-a' });

  it('lets the operator move a Reschedule sandbox’s pod off the cordoned node while it is cordoned', () => {
    const m = new SoakModel(NS, [], [sandbox({ workspace: true })]);
    drain(m, 1000, 5000);
    expect(signatures(m, [podMoved(1500, 'node-a')])).toEqual([]);
  });

  it('moves no pod of a Block sandbox, none on another node, and none before the cordon', () => {
    const block = new SoakModel(NS, [], [sandbox({ workspace: false })]);
    drain(block, 1000, 5000);
    expect(signatures(block, [podMoved(1500, 'node-a')])).toEqual(['no-wrongful-stop/operator/live']);
    const other = new SoakModel(NS, [], [sandbox({ workspace: true })]);
    drain(other, 1000, 5000);
    expect(signatures(other, [podMoved(1500, 'node-b')])).toEqual(['no-wrongful-stop/operator/live']);
    const early = new SoakModel(NS, [], [sandbox({ workspace: true })]);
    drain(early, 1000, 5000);
    expect(signatures(early, [podMoved(900, 'node-a')])).toEqual(['no-wrongful-stop/operator/live']);
  });

  it('ends a lag after the uncordon, and excuses only the operator', () => {
    const after = (ms: number) => {
      const m = new SoakModel(NS, [], [sandbox({ workspace: true })]);
      drain(m, 1000, 2000);
      return signatures(m, [podMoved(2000 + ms, 'node-a')]);
    };
    expect(after(DRAIN_LAG_MS - 100)).toEqual([]);
    expect(after(DRAIN_LAG_MS + 100)).toEqual(['no-wrongful-stop/operator/live']);
    const m = new SoakModel(NS, [], [sandbox({ workspace: true })]);
    drain(m, 1000, 5000);
    const user = op(m, 'delete-pod', 1499, 1510, { sandbox: 'sbx-a' });
    expect(signatures(m, [podMoved(1500, 'node-a', user)])).toEqual(['no-wrongful-stop/delete-pod/live']);
  });

  it('judges a move answered 5xx but stored as the operator’s, when kwok finalizes the pod after it', () => {
    // Seed 20270004: the operator's DELETE of a drained pod was answered 504 ("context canceled") yet
    // stored; kwok's finalizing DELETE was the first stop the log showed, and was judged as kwok's.
    const kwokFinalizes = (at: number) => ({
      ...podMoved(at, 'node-a', 'admin'),
      userAgent: 'kwok/v0.8.0 (linux/amd64)',
    });
    const timedOut = (at: number, by: string | OpRecord = OPERATOR) =>
      event(at, 'delete', 'pods', 'sbx-a-0', 504, by, { responseObject: { kind: 'Status', code: 504 } });
    const moved = new SoakModel(NS, [], [sandbox({ workspace: true })]);
    drain(moved, 1000, 5000);
    expect(signatures(moved, [timedOut(1500), kwokFinalizes(1900)])).toEqual([]);
    // The request is judged as its actor's: a Block sandbox's pod may not be moved, nor by a user.
    const block = new SoakModel(NS, [], [sandbox({ workspace: false })]);
    drain(block, 1000, 5000);
    expect(signatures(block, [timedOut(1500), kwokFinalizes(1900)])).toEqual([
      'no-wrongful-stop/operator/live',
    ]);
    const byUser = new SoakModel(NS, [], [sandbox({ workspace: true })]);
    drain(byUser, 1000, 5000);
    const user = op(byUser, 'delete-pod', 1499, 1510, { sandbox: 'sbx-a' });
    expect(signatures(byUser, [timedOut(1500, user), kwokFinalizes(1900)])).toEqual([
      'no-wrongful-stop/delete-pod/live',
    ]);
    // With no such request, kwok's stop stands as nobody's to make.
    const none = new SoakModel(NS, [], [sandbox({ workspace: true })]);
    drain(none, 1000, 5000);
    expect(signatures(none, [kwokFinalizes(1900)])).toEqual(['no-wrongful-stop/kwok/live']);
  });
});

describe('idleness', () => {
  const model = (idleSeconds: number | undefined) =>
    new SoakModel(NS, [], [sandbox({ workspace: true, idleSeconds })]);
  const attach = (m: SoakModel, at: number) =>
    op(m, 'attach', at - 10, at, { sandbox: 'sbx-a', reference: 'ref-1', outcome: 'attached' });

  it('lets the operator stop an idle sandbox’s pods when spec.idle is set and no session is attached', () => {
    expect(signatures(model(5), [podStop(1200)])).toEqual([]);
    expect(signatures(model(undefined), [podStop(1200)])).toEqual(['no-wrongful-stop/operator/live']);
  });

  it('never while a reference is Attached, once the operator’s cache must hold it', () => {
    const m = model(5);
    attach(m, 1000);
    expect(signatures(m, [podStop(1000 + ATTACH_LAG_MS + 100)])).toEqual(['no-wrongful-stop/operator/live']);
    const early = model(5);
    attach(early, 1000);
    expect(signatures(early, [podStop(1000 + ATTACH_LAG_MS - 100)])).toEqual([]);
  });

  it('again once the reference is detached, and a failed attach keeps nothing awake', () => {
    const m = model(5);
    attach(m, 1000);
    op(m, 'detach', 9000, 9010, { sandbox: 'sbx-a', reference: 'ref-1', outcome: 'detached' });
    expect(signatures(m, [podStop(9500)])).toEqual([]);
    const failed = model(5);
    op(failed, 'attach', 990, 1000, { sandbox: 'sbx-a', reference: 'ref-1', outcome: 'HTTP 500' });
    expect(signatures(failed, [podStop(9500)])).toEqual([]);
  });
});

describe('workspace-kept', () => {
  const model = () => new SoakModel(NS, [], [sandbox({ workspace: true })]);

  it('names a claim deleted before any Exclusive verdict of its sandbox, a suspension included', () => {
    const m = model();
    expect(signatures(m, [setMode(m, 1000, 'Suspended'), claimDelete(1500)])).toEqual([
      'workspace-kept/operator',
    ]);
    const n = model();
    expect(
      signatures(n, [version(1000, OPERATOR, { deleting: true, verdict: 'Foreign' }), claimDelete(1500)]),
    ).toEqual(['workspace-kept/operator']);
  });

  it('lets it go after an Exclusive verdict, or once the namespace terminates', () => {
    const m = model();
    expect(
      signatures(m, [version(1000, OPERATOR, { deleting: true, verdict: 'Exclusive' }), claimDelete(1500)]),
    ).toEqual([]);
    const n = model();
    const namespaceDeletion = event(
      1400,
      'delete',
      'namespaces',
      NS,
      200,
      op(n, 'delete-namespace', 1399, 1409),
      {
        objectRef: { resource: 'namespaces', name: NS },
      },
    );
    expect(
      signatures(n, [
        namespaceDeletion,
        claimDelete(1500, 'system:serviceaccount:kube-system:namespace-controller'),
      ]),
    ).toEqual([]);
  });

  /**
   * Found by the soak (seed 20261208 on 406b780): the status write that recorded Exclusive was stored, but the
   * API server answered it 504 (a timeout under load), so the log has that version only from a later answer,
   * completed after the claim's delete. etcd's revision is global: any answer showing a later revision,
   * completed before the delete, proves the decision was stored before it.
   */
  it('takes a decision as stored by the first answer that shows its revision or a later one', () => {
    const laterAnswer = (at: number) => {
      const e = version(at, OPERATOR, { deleting: true, verdict: 'Exclusive' });
      const object = e.responseObject as { metadata: Record<string, unknown> };
      return {
        ...e,
        responseObject: { ...object, metadata: { ...object.metadata, resourceVersion: '3741' } },
      };
    };
    const otherWrite = (at: number, revision: string) =>
      event(at, 'create', 'sessionreferences', 'ref-1', 201, OPERATOR, {
        responseObject: { kind: 'SessionReference', metadata: { name: 'ref-1', resourceVersion: revision } },
      });
    const m = model();
    expect(signatures(m, [otherWrite(1100, '3747'), claimDelete(1500), laterAnswer(1700)])).toEqual([]);
    const n = model();
    expect(signatures(n, [otherWrite(1100, '3740'), claimDelete(1500), laterAnswer(1700)])).toEqual([
      'workspace-kept/operator',
    ]);
  });

  /**
   * Found by the soak (CI seed 20261347): the operator's write of Exclusive was answered 5xx yet stored (the
   * operator killed meanwhile), and the next answer showing it came after the claim's delete, no other answer
   * between. The API server's managedFields time of the status (second precision) bounds when it was stored.
   */
  it('takes a decision as stored by its version’s managedFields time of the status, plus that second', () => {
    const laterAnswer = (at: number, statusTime: string) => {
      const e = version(at, OPERATOR, { deleting: true, verdict: 'Exclusive' });
      const object = e.responseObject as { metadata: Record<string, unknown> };
      const managedFields = [
        { manager: 'sandbox-operator', subresource: 'status', time: statusTime },
        { manager: 'sandbox-operator', time: new Date(at).toISOString() },
      ];
      return { ...e, responseObject: { ...object, metadata: { ...object.metadata, managedFields } } };
    };
    const m = model();
    expect(signatures(m, [claimDelete(5000), laterAnswer(6000, '1970-01-01T00:00:01Z')])).toEqual([]);
    const n = model();
    expect(signatures(n, [claimDelete(5000), laterAnswer(6000, '1970-01-01T00:00:05Z')])).toEqual([
      'workspace-kept/operator',
    ]);
  });

  it('judges only the sandboxes’ workspace claims, and only accepted deletes', () => {
    const m = model();
    expect(
      signatures(m, [
        event(1500, 'delete', 'persistentvolumeclaims', 'data-other', 200, OPERATOR),
        event(1600, 'delete', 'persistentvolumeclaims', 'workspace-sbx-a', 403, OPERATOR),
      ]),
    ).toEqual([]);
  });
});
