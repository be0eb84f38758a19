/**
 * Issue 27's judgements must be able to fail: a suspension lets the operator stop a live sandbox's pods, and
 * only while the spec suspends it; a workspace claim goes only after an Exclusive verdict or with its
 * namespace.
 */
import { describe, expect, it } from 'vitest';
import type { TimedEvent } from '../../soak/audit-log.ts';
import { checkSequence } from '../../soak/invariants.ts';
import { SoakModel, type OpRecord } from '../../soak/model.ts';
import { SUSPEND_LAG_MS } from '../../soak/workspace.ts';
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
