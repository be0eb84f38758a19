/**
 * Issue 25's judgements must be able to fail: synthetic audit events of one namespace, judged by the checker
 * the soak uses. Each move's breach is named; what the model legitimately permits (an erase request while it
 * is pending, a finalizer stripped in a terminating namespace) passes, and nothing beyond it.
 */
import { describe, expect, it } from 'vitest';
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import type { TimedEvent } from '../../soak/audit-log.ts';
import { coverageOf } from '../../soak/coverage.ts';
import { checkSequence } from '../../soak/invariants.ts';
import type { Losses } from '../../soak/judgements.ts';
import { SoakModel, type OpRecord } from '../../soak/model.ts';
import { event, NS, op, OPERATOR, refObject, sandbox } from './audit-fixtures.ts';

const signatures = (model: SoakModel, events: TimedEvent[], losses?: Losses) =>
  checkSequence(model, events, OPERATOR, losses).map((v) => v.signature);

const sessions = [{ id: 'workspace_1', worktree: 'wt-2', role: 'Root' as const }];

/** A version of Sandbox sbx-a as a write's answer recorded it. */
function version(
  at: number,
  by: string | OpRecord,
  over: { uid?: string; annotations?: Record<string, string>; status?: object; subresource?: string } = {},
): TimedEvent {
  return event(at, 'patch', 'sandboxes', 'sbx-a', 200, by, {
    objectRef: {
      resource: 'sandboxes',
      namespace: NS,
      name: 'sbx-a',
      ...(over.subresource === undefined ? {} : { subresource: over.subresource }),
    },
    responseObject: {
      kind: 'Sandbox',
      metadata: { name: 'sbx-a', uid: over.uid ?? 'uid-a', annotations: over.annotations ?? {} },
      ...(over.status === undefined ? {} : { status: over.status }),
    },
  });
}

const statusWrite = (at: number, status: object, uid?: string) =>
  version(at, OPERATOR, { status, subresource: 'status', ...(uid === undefined ? {} : { uid }) });

const namespaceDeleted = (model: SoakModel, at: number) =>
  event(at, 'delete', 'namespaces', NS, 200, op(model, 'delete-namespace', at - 1, at + 9), {
    objectRef: { resource: 'namespaces', name: NS },
  });

describe('guarded-write', () => {
  it('names a status-subresource relabel or finalizer strip the API server stored, not one it refused', () => {
    const model = new SoakModel(NS, [], [sandbox()]);
    const relabel = op(model, 'status-write', 100, 110, { sandbox: 'sbx-a' });
    const pdb = op(model, 'status-write', 200, 210, { sandbox: 'sbx-a' });
    const refused = [
      event(101, 'patch', 'pods', 'sbx-a-0', 403, relabel, {
        objectRef: { resource: 'pods', subresource: 'status', namespace: NS, name: 'sbx-a-0' },
      }),
    ];
    expect(signatures(model, refused)).toEqual([]);
    const stored = [
      event(101, 'patch', 'pods', 'sbx-a-0', 200, relabel, {
        objectRef: { resource: 'pods', subresource: 'status', namespace: NS, name: 'sbx-a-0' },
      }),
      event(201, 'patch', 'poddisruptionbudgets', 'sbx-a-sandbox', 200, pdb, {
        objectRef: { resource: 'poddisruptionbudgets', subresource: 'status', namespace: NS, name: 'x' },
      }),
    ];
    expect(signatures(model, stored)).toEqual([
      'guarded-write/status-write/pods',
      'guarded-write/status-write/poddisruptionbudgets',
    ]);
  });

  it("names admission refusing a status writer's own write (the disruption controller's), once per object", () => {
    const model = new SoakModel(NS, [], [sandbox()]);
    const statusOf = (at: number, code: number) =>
      event(at, 'update', 'poddisruptionbudgets', 'sbx-a-sandbox', code, 'admin', {
        userAgent: 'kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/$Format/disruption-controller',
        objectRef: {
          resource: 'poddisruptionbudgets',
          subresource: 'status',
          namespace: NS,
          name: 'sbx-a-sandbox',
        },
      });
    expect(signatures(model, [statusOf(100, 200)])).toEqual([]);
    expect(signatures(model, [statusOf(100, 403), statusOf(200, 403)])).toEqual([
      'guarded-write/disruption-controller/status-refused',
    ]);
  });

  it("names a Sandbox's finalizer stripped while its namespace is live, not once it terminates", () => {
    const model = new SoakModel(NS, [], [sandbox()]);
    const early = op(model, 'strip-finalizer', 100, 110, { sandbox: 'sbx-a' });
    expect(signatures(model, [version(101, early)])).toEqual(['guarded-write/strip-finalizer/sandboxes']);
    const later = new SoakModel(NS, [], [sandbox()]);
    const teardown = namespaceDeleted(later, 1000);
    const strip = op(later, 'strip-finalizer', 1100, 1110, { sandbox: 'sbx-a' });
    expect(signatures(later, [teardown, version(1101, strip)])).toEqual([]);
  });

  it('names a lowered spec.replicas the API server stored (through /scale or the spec), not a refused one', () => {
    const model = new SoakModel(NS, [], [sandbox({ replicas: 2 })]);
    const lower = op(model, 'lower-replicas', 100, 110, { sandbox: 'sbx-a' });
    const through = (code: number, subresource?: string) =>
      event(101, 'patch', 'sandboxes', 'sbx-a', code, lower, {
        objectRef: {
          resource: 'sandboxes',
          namespace: NS,
          name: 'sbx-a',
          ...(subresource ? { subresource } : {}),
        },
      });
    expect(signatures(model, [through(422), through(422, 'scale')])).toEqual([]);
    expect(signatures(model, [through(200, 'scale')])).toEqual(['guarded-write/lower-replicas/sandboxes']);
  });
});

describe('the finalizer stripped in a terminating namespace', () => {
  /** sbx-a (wt-1) held by a foreign reference; the namespace deleted at 6000; its pod stopped at 6200. */
  function blocked(stripAt: number | undefined, retakenAt?: number) {
    const model = new SoakModel(NS, sessions, [sandbox()]);
    const attach = op(model, 'attach', 1000, 1010, {
      reference: 'ref-r',
      sandbox: 'sbx-a',
      outcome: 'attached',
    });
    model.attached(attach, 'ref-r', 'sbx-a', model.session('workspace_1'));
    const events = [
      event(1002, 'create', 'sessionreferences', 'ref-r', 201, attach, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
      namespaceDeleted(model, 6000),
    ];
    if (stripAt !== undefined)
      events.push(
        version(stripAt, op(model, 'strip-finalizer', stripAt - 1, stripAt + 9, { sandbox: 'sbx-a' })),
      );
    if (retakenAt !== undefined) {
      const retaken = version(retakenAt, OPERATOR);
      (retaken.responseObject as { metadata: object }).metadata = {
        name: 'sbx-a',
        uid: 'uid-a',
        finalizers: [EXCLUSIVITY_FINALIZER],
      };
      events.push(retaken);
    }
    events.push(event(6200, 'delete', 'pods', 'sbx-a-0', 200, OPERATOR));
    return signatures(model, events);
  }

  it('lets the operator release the pods of the Sandbox gone that way, and only after it went', () => {
    expect(blocked(6100)).toEqual([]);
    expect(blocked(6300)).toEqual(['no-wrongful-stop/operator/foreign']);
    expect(blocked(undefined)).toEqual(['no-wrongful-stop/operator/foreign']);
  });

  it('judges as always once the operator put its finalizer back (the deletion is its own again)', () => {
    expect(blocked(6100, 6150)).toEqual(['no-wrongful-stop/operator/foreign']);
  });
});

describe('guarded-pods', () => {
  const refusal = (at: number, code: number, verb = 'create') =>
    event(at, verb, 'poddisruptionbudgets', 'sbx-a-sandbox', code, OPERATOR);
  const podCreated = (at: number) => event(at, 'create', 'pods', 'sbx-a-0', 201, OPERATOR);

  it('names a pod created after its guard was refused, or beside the refused write, until a guard stands', () => {
    const model = new SoakModel(NS, [], [sandbox()]);
    expect(signatures(model, [refusal(1000, 403), podCreated(1500)])).toEqual(['guarded-pods/operator']);
    expect(signatures(model, [podCreated(1000), refusal(999, 403)])).toEqual(['guarded-pods/operator']);
    expect(signatures(model, [refusal(1000, 403), refusal(2000, 201), podCreated(2500)])).toEqual([]);
    expect(signatures(model, [podCreated(500), refusal(1000, 403)])).toEqual([]);
  });

  it('passes a pod created while a guard stands, though a later repair of it was refused', () => {
    const model = new SoakModel(NS, [], [sandbox()]);
    expect(signatures(model, [refusal(100, 201), refusal(1000, 403, 'update'), podCreated(1500)])).toEqual(
      [],
    );
  });

  it('passes a pod created once the guard’s status was written, after a create answered 504 was stored', () => {
    // Seed 20261394: the create was answered 504 ("context canceled") yet stored; the disruption controller
    // then wrote the guard's status, and the operator's cache saw the guard standing.
    const model = new SoakModel(NS, [], [sandbox()]);
    const statusWritten = (at: number, code: number) =>
      event(at, 'update', 'poddisruptionbudgets', 'sbx-a-sandbox', code, 'admin', {
        objectRef: {
          resource: 'poddisruptionbudgets',
          subresource: 'status',
          namespace: NS,
          name: 'sbx-a-sandbox',
        },
      });
    const timedOut = refusal(1500, 504);
    expect(
      signatures(model, [refusal(1000, 403), timedOut, statusWritten(1800, 200), podCreated(2000)]),
    ).toEqual([]);
    // Not before the status is written, nor by a status write that failed.
    expect(
      signatures(model, [refusal(1000, 403), timedOut, podCreated(1700), statusWritten(1800, 200)]),
    ).toEqual(['guarded-pods/operator']);
    expect(
      signatures(model, [refusal(1000, 403), timedOut, statusWritten(1800, 404), podCreated(2000)]),
    ).toEqual(['guarded-pods/operator']);
  });
});

describe('final-decision', () => {
  it('names an Exclusive decision decided again, not a new incarnation deciding otherwise', () => {
    const model = new SoakModel(NS, [], [sandbox()]);
    const exclusive = statusWrite(1000, { decision: { verdict: 'Exclusive' } });
    expect(signatures(model, [exclusive, statusWrite(2000, { decision: { verdict: 'Foreign' } })])).toEqual([
      'final-decision/operator',
    ]);
    expect(
      signatures(model, [exclusive, statusWrite(2000, { decision: { verdict: 'Foreign' } }, 'uid-b')]),
    ).toEqual([]);
  });
});

describe('late-reference', () => {
  /** A late reference (uid-late, worktree `worktree`) to sbx-a (wt-1), erased by the operator at 3000. */
  function late(worktree: string, reported: boolean) {
    const model = new SoakModel(NS, sessions, [sandbox()]);
    const user = op(model, 'delete-sandbox', 1000, 1010, { sandbox: 'sbx-a' });
    const host = op(model, 'late-reference', 2000, 4000, { sandbox: 'sbx-a' });
    const object = refObject('Attached', worktree);
    const events = [
      event(1002, 'delete', 'sandboxes', 'sbx-a', 200, user),
      event(2500, 'create', 'sessionreferences', 'ref-r', 201, host, {
        responseObject: { ...object, metadata: { ...object.metadata, uid: 'uid-late' } },
      }),
      event(3000, 'delete', 'sessionreferences', 'ref-r', 200, OPERATOR, {
        requestObject: { preconditions: { uid: 'uid-late', resourceVersion: '9' } },
      }),
    ];
    if (reported)
      events.push(
        event(3010, 'create', 'events', 'sbx-a.1', 201, OPERATOR, {
          requestObject: {
            reason: 'LateReferencesErased',
            involvedObject: { name: 'sbx-a' },
            message:
              'written after the exclusive decision (their attaches were refused), erased with the index: ref-r',
          },
        }),
      );
    return { model, events };
  }

  it('names a foreign late reference erased without its Event', () => {
    const unreported = late('wt-2', false);
    expect(signatures(unreported.model, unreported.events)).toEqual(['late-reference/operator/unreported']);
    const reported = late('wt-2', true);
    expect(signatures(reported.model, reported.events)).toEqual([]);
  });

  it('passes one whose report the evidence shows lost, and an own-worktree one (it would not have blocked)', () => {
    const unreported = late('wt-2', false);
    const fault = { at: 3004, method: 'POST', path: `/api/v1/namespaces/${NS}/events` };
    expect(signatures(unreported.model, unreported.events, { faults: [fault], kills: [] })).toEqual([]);
    expect(signatures(unreported.model, unreported.events, { faults: [], kills: [3500] })).toEqual([]);
    const elsewhere = { ...fault, path: `/api/v1/namespaces/${NS}/pods/sbx-a-0` };
    expect(signatures(unreported.model, unreported.events, { faults: [elsewhere], kills: [] })).toEqual([
      'late-reference/operator/unreported',
    ]);
    const own = late('wt-1', false);
    expect(signatures(own.model, own.events)).toEqual([]);
  });

  it('is counted in what the run judged, so a clean run says how much it reached', () => {
    const { model, events } = late('wt-2', true);
    expect(coverageOf(model, events, OPERATOR)).toMatchObject({
      lateReferencesWritten: 1,
      foreignLateReferencesErased: 1,
      lateReferencesReported: 1,
      exclusiveDecisionsRecorded: 0,
    });
  });
});

describe('an erase request', () => {
  const erase = { [ANNOTATIONS.eraseReferences]: 'ticket-1' };
  /** sbx-a (wt-1), live, with a foreign reference; the operator deletes it at 3000. */
  function erased(versions: (model: SoakModel) => TimedEvent[]) {
    const model = new SoakModel(NS, sessions, [sandbox()]);
    const attach = op(model, 'attach', 1000, 1010, {
      reference: 'ref-r',
      sandbox: 'sbx-a',
      outcome: 'attached',
    });
    model.attached(attach, 'ref-r', 'sbx-a', model.session('workspace_1'));
    const events = [
      event(1002, 'create', 'sessionreferences', 'ref-r', 201, attach, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
      ...versions(model),
      event(3000, 'delete', 'sessionreferences', 'ref-r', 200, OPERATOR, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
    ];
    return signatures(model, events);
  }

  it("permits the operator to delete any of the sandbox's references while the request is pending", () => {
    expect(erased(() => [])).toEqual(['no-lost-reference/operator']);
    expect(
      erased((model) => [
        statusWrite(500, { decision: undefined }),
        version(2000, op(model, 'erase', 1999, 2009, { sandbox: 'sbx-a' }), {
          annotations: erase,
          status: {},
        }),
      ]),
    ).toEqual([]);
  });

  it('permits nothing once the status recorded it, nor for a value the incarnation inherited', () => {
    expect(
      erased((model) => [
        version(2000, op(model, 'erase', 1999, 2009, { sandbox: 'sbx-a' }), {
          annotations: erase,
          status: {},
        }),
        statusWrite(2500, { capacity: { overflowed: false, erasedFor: 'ticket-1' } }),
      ]),
    ).toEqual(['no-lost-reference/operator']);
    expect(
      erased((model) => [
        version(100, op(model, 'apply', 99, 109, { sandbox: 'sbx-a' }), { annotations: erase }),
        statusWrite(500, { capacity: { overflowed: false, erasedFor: 'ticket-1' } }),
      ]),
    ).toEqual(['no-lost-reference/operator']);
  });
});

describe('the legacy marker', () => {
  const reconciliation = (marker: boolean, uid = 'uid-a') =>
    statusWrite(1000, { reconciliation: { state: marker ? 'Complete' : 'Pending', marker } }, uid);
  const at = (e: TimedEvent, t: number): TimedEvent => ({ ...e, received: t, completed: t + 1 });

  it('names a marker shown after a status recorded the incarnation unmarked, not one it was born with', () => {
    const model = () => new SoakModel(NS, [], [sandbox()]);
    expect(signatures(model(), [reconciliation(false), at(reconciliation(true), 2000)])).toEqual([
      'legacy-marker/operator',
    ]);
    expect(signatures(model(), [reconciliation(true), at(reconciliation(true), 2000)])).toEqual([]);
    // Another incarnation under the name, born with it.
    expect(signatures(model(), [reconciliation(false), at(reconciliation(true, 'uid-b'), 2000)])).toEqual([]);
  });
});

describe('the cleanup fence', () => {
  const fence = { [ANNOTATIONS.cleanupFence]: '2026-12-02T00:00:00Z' };
  function attachDuring(start: number, end: number) {
    const model = new SoakModel(NS, sessions, [sandbox()]);
    op(model, 'attach', start, end, { reference: 'ref-r', sandbox: 'sbx-a', outcome: 'attached' });
    return signatures(model, [version(1000, OPERATOR, { annotations: fence }), version(2000, OPERATOR)]);
  }

  it('names an attach that succeeded wholly while the fence stood, not one that overlapped its lifting', () => {
    expect(attachDuring(1200, 1300)).toEqual(['fence/cleanup-fence']);
    expect(attachDuring(1900, 2100)).toEqual([]);
    expect(attachDuring(900, 1100)).toEqual([]);
  });

  // Seed 20270323: the operator was killed while its lift was in flight; the API server answered that PATCH 504
  // ("context canceled") yet stored it, so no version without the fence was recorded before the attach read.
  const FENCE_PATH = `/metadata/annotations/${ANNOTATIONS.cleanupFence.replace('/', '~1')}`;
  const answered504 = (at: number, patch: object[]) =>
    event(at, 'patch', 'sandboxes', 'sbx-a', 504, OPERATOR, {
      objectRef: { resource: 'sandboxes', namespace: NS, name: 'sbx-a' },
      requestObject: patch,
    });
  const lift = [
    { op: 'test', path: FENCE_PATH, value: fence[ANNOTATIONS.cleanupFence] },
    { op: 'remove', path: FENCE_PATH },
  ];
  function attachAfter(doubt: TimedEvent) {
    const model = new SoakModel(NS, sessions, [sandbox()]);
    op(model, 'attach', 1600, 1700, { reference: 'ref-r', sandbox: 'sbx-a', outcome: 'attached' });
    return signatures(model, [
      version(1000, OPERATOR, { annotations: fence }),
      doubt,
      version(2000, OPERATOR),
    ]);
  }

  it('does not name an attach after a lift answered 5xx that may have been stored, but one after any other', () => {
    expect(attachAfter(answered504(1500, lift))).toEqual([]);
    expect(attachAfter(answered504(1500, [{ op: 'remove', path: FENCE_PATH }]))).toEqual([]);
    const merge = (annotations: object) => ({
      ...answered504(1500, []),
      requestObject: { metadata: { annotations } },
    });
    expect(attachAfter(merge({ [ANNOTATIONS.cleanupFence]: null }))).toEqual([]);
    expect(attachAfter(merge({ [ANNOTATIONS.adoptedFrom]: null }))).toEqual(['fence/cleanup-fence']);
    // A write answered 5xx that does not touch the fence, a lift of another fence, one received after the
    // attach ended, and a lift the API server refused for good (409): the fence certainly stood.
    const finalizers = [{ op: 'add', path: '/metadata/finalizers/-', value: 'x' }];
    expect(attachAfter(answered504(1500, finalizers))).toEqual(['fence/cleanup-fence']);
    const older = [{ op: 'test', path: FENCE_PATH, value: '2026-12-01T00:00:00Z' }, lift[1]!];
    expect(attachAfter(answered504(1500, older))).toEqual(['fence/cleanup-fence']);
    expect(attachAfter(answered504(1800, lift))).toEqual(['fence/cleanup-fence']);
    expect(attachAfter({ ...answered504(1500, lift), responseStatus: { code: 409 } })).toEqual([
      'fence/cleanup-fence',
    ]);
  });
});
