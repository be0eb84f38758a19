/**
 * The soak's witness must be able to fail: synthetic audit events of one namespace, judged by the same
 * checker the soak uses. A legitimate release passes; each defect class of issue 9 is named.
 */
import { describe, expect, it } from 'vitest';
import type { TimedEvent } from '../../soak/audit-log.ts';
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { checkSequence } from '../../soak/invariants.ts';
import { SoakModel, type SandboxSpec } from '../../soak/model.ts';
import { event, NS, op, OPERATOR, refObject, sandbox } from './audit-fixtures.ts';

/** sbx-a (wt-1) with a foreign reference (wt-2) attached at 1000, the Sandbox deleted at 2000 (or not). */
function blockedSandbox(spec: Partial<SandboxSpec> = {}, deleted = true) {
  const model = new SoakModel(NS, [{ id: 'workspace_1', worktree: 'wt-2', role: 'Root' }], [sandbox(spec)]);
  const attach = op(model, 'attach', 1000, 1010, {
    reference: 'ref-r',
    sandbox: 'sbx-a',
    outcome: 'attached',
  });
  model.attached(attach, 'ref-r', 'sbx-a', model.session('workspace_1'));
  const user = op(model, 'delete-sandbox', 2000, 2010, { sandbox: 'sbx-a' });
  const events = [
    event(1002, 'create', 'sessionreferences', 'ref-r', 201, attach, {
      responseObject: refObject('Attached', 'wt-2'),
    }),
    ...(deleted ? [event(2002, 'delete', 'sandboxes', 'sbx-a', 200, user)] : []),
  ];
  return { model, events };
}

/** sbx-a (wt-1) deleted at 2000, and a foreign session's attach at 2500 that its deletion refuses. */
function lateAttach() {
  const model = new SoakModel(NS, [{ id: 'workspace_1', worktree: 'wt-2', role: 'Root' }], [sandbox()]);
  const user = op(model, 'delete-sandbox', 2000, 2010, { sandbox: 'sbx-a' });
  const late = op(model, 'attach', 2500, 2600, {
    reference: 'ref-r',
    sandbox: 'sbx-a',
    outcome: 'refused: sandbox deleting or gone',
  });
  return { model, user, late };
}

const NAMESPACE_CONTROLLER =
  'kube-controller-manager/v1.36.3/system:serviceaccount:kube-system:namespace-controller';

const signatures = (model: SoakModel, events: TimedEvent[]) =>
  checkSequence(model, events, OPERATOR).map((v) => v.signature);

describe('the soak invariants', () => {
  it('pass a release that waited for the foreign reference to be forgotten', () => {
    const { model, events } = blockedSandbox();
    const forget = op(model, 'forget', 3000, 3010, { reference: 'ref-r', sandbox: 'sbx-a' });
    model.removing(forget, 'ref-r', true);
    events.push(
      event(3002, 'delete', 'sessionreferences', 'ref-r', 200, forget, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
    );
    events.push(event(4000, 'delete', 'pods', 'sbx-a-0', 200, OPERATOR));
    expect(signatures(model, events)).toEqual([]);
  });

  it('name a pod deleted while a foreign reference exists', () => {
    const { model, events } = blockedSandbox();
    events.push(event(2500, 'delete', 'pods', 'sbx-a-0', 200, OPERATOR));
    expect(signatures(model, events)).toEqual(['no-wrongful-stop/operator/foreign']);
  });

  it('name a refused re-attach that deletes the reference it found (#1), and the release that follows', () => {
    const { model, events } = blockedSandbox();
    const reattach = op(model, 'attach', 3000, 3020, {
      reference: 'ref-r',
      sandbox: 'sbx-a',
      outcome: 'refused: sandbox deleting or gone',
    });
    events.push(event(3001, 'create', 'sessionreferences', 'ref-r', 409, reattach));
    events.push(event(3005, 'patch', 'sessionreferences', 'ref-r', 200, reattach));
    events.push(
      event(3010, 'delete', 'sessionreferences', 'ref-r', 200, reattach, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
    );
    events.push(event(5000, 'delete', 'pods', 'sbx-a-0', 200, OPERATOR));
    expect(signatures(model, events)).toEqual([
      'no-lost-reference/attach',
      'no-wrongful-stop/operator/foreign',
    ]);
  });

  it('pass the erase after a release taking a reference created after the fence, not one created before', () => {
    const { model, user, late } = lateAttach();
    const events = [
      event(2002, 'delete', 'sandboxes', 'sbx-a', 200, user),
      event(2501, 'create', 'sessionreferences', 'ref-r', 201, late, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
      event(2550, 'delete', 'sessionreferences', 'ref-r', 200, OPERATOR, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
    ];
    expect(signatures(model, events)).toEqual([]);

    const before = blockedSandbox();
    before.events.push(
      event(2550, 'delete', 'sessionreferences', 'ref-r', 200, OPERATOR, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
    );
    expect(signatures(before.model, before.events)).toContain('no-lost-reference/operator');
  });

  it('pass the late erase after the Sandbox is gone, even once a later incarnation stands (docs/adr/0011)', () => {
    const { model, user, late } = lateAttach();
    const erase = event(2800, 'delete', 'sessionreferences', 'ref-r', 200, OPERATOR, {
      responseObject: refObject('Attached', 'wt-2'),
    });
    const events = [
      event(500, 'create', 'sandboxes', 'sbx-a', 201, user),
      event(2002, 'delete', 'sandboxes', 'sbx-a', 200, user),
      event(2501, 'create', 'sessionreferences', 'ref-r', 201, late, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
      // GitOps re-creates it between the release and the late erase.
      event(2700, 'create', 'sandboxes', 'sbx-a', 201, user),
      erase,
    ];
    expect(signatures(model, events)).toEqual([]);
    // A reference written to the new incarnation is no late one: the operator may not take it.
    const onTheNew = events.map((e) => (e.received === 2501 ? { ...e, received: 2750, completed: 2751 } : e));
    expect(signatures(model, onTheNew)).toContain('no-lost-reference/operator');
  });

  it('name a prune that deletes a reference re-attached since its LIST (#6), and pass one of a tombstone', () => {
    const { model, events } = blockedSandbox({}, false);
    const detach = op(model, 'detach', 2500, 2510, { reference: 'ref-r', sandbox: 'sbx-a' });
    events.push(
      event(2501, 'patch', 'sessionreferences', 'ref-r', 200, detach, {
        responseObject: refObject('Detached', 'wt-2'),
      }),
    );
    const tombstonePruned = [
      ...events,
      event(
        3010,
        'delete',
        'sessionreferences',
        'ref-r',
        200,
        op(model, 'prune', 3000, 3020, { worktree: 'wt-2' }),
      ),
    ];
    expect(signatures(model, tombstonePruned)).toEqual([]);
    const reattach = op(model, 'attach', 3001, 3008, {
      reference: 'ref-r',
      sandbox: 'sbx-a',
      outcome: 'attached',
    });
    const raced = [
      ...tombstonePruned.slice(0, -1),
      event(3005, 'patch', 'sessionreferences', 'ref-r', 200, reattach, {
        responseObject: refObject('Attached', 'wt-2'),
      }),
      tombstonePruned.at(-1)!,
    ];
    expect(signatures(model, raced)).toEqual(['no-lost-reference/prune']);
  });

  it('judge a preconditioned DELETE by the incarnation it names: a re-create logged first is not what it removed', () => {
    // Seed 20261430 of the 1,000 run: the prune's DELETE of the tombstone (uid-1) completed in the log 10 ms
    // after the re-attach's create (uid-2) — the create committed after the delete, or it would have met 409.
    const { model, events } = blockedSandbox({}, false);
    const withUid = (state: string, uid: string) => {
      const object = refObject(state, 'wt-2');
      return { ...object, metadata: { ...object.metadata, uid } };
    };
    const detach = op(model, 'detach', 2500, 2510, { reference: 'ref-r', sandbox: 'sbx-a' });
    const prune = op(model, 'prune', 3000, 3020, { worktree: 'wt-2' });
    const reattach = op(model, 'attach', 3001, 3030, {
      reference: 'ref-r',
      sandbox: 'sbx-a',
      outcome: 'attached',
    });
    const pruneOf = (uid: string) =>
      event(3010, 'delete', 'sessionreferences', 'ref-r', 200, prune, {
        requestObject: { preconditions: { uid, resourceVersion: '7' } },
      });
    const logged = [
      ...events,
      event(2501, 'patch', 'sessionreferences', 'ref-r', 200, detach, {
        responseObject: withUid('Detached', 'uid-1'),
      }),
      event(3005, 'create', 'sessionreferences', 'ref-r', 201, reattach, {
        responseObject: withUid('Attached', 'uid-2'),
      }),
    ];
    expect(signatures(model, [...logged, pruneOf('uid-1')])).toEqual([]);
    // The same DELETE naming the attached incarnation is still a lost reference.
    expect(signatures(model, [...logged, pruneOf('uid-2')])).toEqual(['no-lost-reference/prune']);
  });

  it('name an eviction of a pod of a live sandbox (#2) and of an adopted one (#3)', () => {
    const live = new SoakModel(NS, [], [sandbox()]);
    const drain = op(live, 'evict-pod', 100, 110, { sandbox: 'sbx-a' });
    expect(signatures(live, [event(101, 'create', 'eviction', 'sbx-a-0', 201, drain)])).toEqual([
      'no-wrongful-stop/evict-pod/live',
    ]);
    const { model, events } = blockedSandbox({ adopted: true });
    events.push(event(4000, 'delete', 'pods', 'sbx-a-0', 200, OPERATOR));
    expect(signatures(model, events)).toEqual(['no-wrongful-stop/operator/adopted']);
  });

  it('date a deletion answered 504 yet stored by the first answer that shows it, and no earlier', () => {
    // The operator's cleanup DELETE cut by its kill ("context canceled"): the API server stored it; the next
    // replica's decision write shows it; its release then stops the pods.
    const judged = (decisionAt: number | undefined) => {
      const model = new SoakModel(NS, [], [sandbox({ cleanupTtlSeconds: 1 })]);
      const deleting = { kind: 'Sandbox', metadata: { name: 'sbx-a', uid: 'uid-a', deletionTimestamp: 'x' } };
      return signatures(model, [
        event(1000, 'delete', 'sandboxes', 'sbx-a', 504, OPERATOR),
        ...(decisionAt === undefined
          ? []
          : [
              event(decisionAt, 'patch', 'sandboxes', 'sbx-a', 200, OPERATOR, {
                objectRef: { resource: 'sandboxes', subresource: 'status', namespace: NS, name: 'sbx-a' },
                responseObject: deleting,
              }),
            ]),
        event(2000, 'delete', 'pods', 'sbx-a-0', 200, OPERATOR),
      ]);
    };
    expect(judged(1500)).toEqual([]);
    expect(judged(undefined)).toEqual(['no-wrongful-stop/operator/live']);
    expect(judged(2500)).toEqual(['no-wrongful-stop/operator/live']);
  });

  it('name a cleanup that deletes a Sandbox an attach succeeded on (#4)', () => {
    const model = new SoakModel(
      NS,
      [{ id: 'workspace_1', worktree: 'wt-1', role: 'Root' }],
      [sandbox({ cleanupTtlSeconds: 1 })],
    );
    const attach = op(model, 'attach', 1000, 1010, {
      reference: 'ref-r',
      sandbox: 'sbx-a',
      outcome: 'attached',
    });
    model.attached(attach, 'ref-r', 'sbx-a', model.session('workspace_1'));
    const events = [
      event(1002, 'create', 'sessionreferences', 'ref-r', 201, attach),
      event(1005, 'delete', 'sandboxes', 'sbx-a', 200, OPERATOR),
    ];
    expect(signatures(model, events)).toEqual(['cleanup-unreferenced/operator/referenced']);
  });

  it('name an attach that succeeded after the deletion was recorded (the fence), not one on a re-created Sandbox', () => {
    const { model, events } = blockedSandbox();
    op(model, 'attach', 3000, 3010, { reference: 'ref-q', sandbox: 'sbx-a', outcome: 'attached' });
    expect(signatures(model, events)).toEqual(['fence/attach']);
    const gitops = op(model, 'apply', 2500, 2510, { sandbox: 'sbx-a' });
    events.push(event(2501, 'patch', 'sandboxes', 'sbx-a', 201, gitops));
    expect(signatures(model, [event(500, 'create', 'sandboxes', 'sbx-a', 201, 'admin'), ...events])).toEqual(
      [],
    );
  });

  it('exempt the namespace teardown, but not a foreign reference the teardown has not deleted yet', () => {
    const { model, events } = blockedSandbox({ adopted: true });
    const teardown = op(model, 'delete-namespace', 6000, 6010);
    events.push(
      event(6001, 'delete', 'namespaces', NS, 200, teardown, {
        objectRef: { resource: 'namespaces', name: NS },
      }),
    );
    events.push(
      event(6500, 'delete', 'sessionreferences', 'ref-r', 200, 'admin', {
        userAgent: NAMESPACE_CONTROLLER,
        responseObject: refObject('Attached', 'wt-2'),
      }),
    );
    events.push(event(7000, 'delete', 'pods', 'sbx-a-0', 200, OPERATOR));
    expect(signatures(model, events)).toEqual([]);
    const shared = blockedSandbox();
    const nsDelete = op(shared.model, 'delete-namespace', 6000, 6010);
    shared.events.push(
      event(6001, 'delete', 'namespaces', NS, 200, nsDelete, {
        objectRef: { resource: 'namespaces', name: NS },
      }),
      event(6200, 'delete', 'pods', 'sbx-a-0', 200, OPERATOR),
      event(6500, 'delete', 'sessionreferences', 'ref-r', 200, 'admin', {
        userAgent: NAMESPACE_CONTROLLER,
        responseObject: refObject('Attached', 'wt-2'),
      }),
    );
    expect(signatures(shared.model, shared.events)).toEqual(['no-wrongful-stop/operator/foreign']);
  });

  it('take a strip stored after a write whose answer completed later as the last word (store order, not clock)', () => {
    const version = (revision: string, finalizers: string[]) => ({
      kind: 'Sandbox',
      metadata: {
        name: 'sbx-a',
        uid: 'u-1',
        resourceVersion: revision,
        finalizers,
        deletionTimestamp: 'now',
      },
    });
    /** The namespace deleted at 6000, its Sandbox's finalizer stripped (revision 11), then a pod deleted. */
    const teardown = (...between: TimedEvent[]) => {
      const { model, events } = blockedSandbox({}, false);
      const deleteNamespace = op(model, 'delete-namespace', 6000, 6010);
      const strip = op(model, 'strip-finalizer', 6150, 6400, { sandbox: 'sbx-a' });
      events.push(
        event(6001, 'delete', 'namespaces', NS, 200, deleteNamespace, {
          objectRef: { resource: 'namespaces', name: NS },
        }),
        event(6200, 'patch', 'sandboxes', 'sbx-a', 200, strip, {
          completed: 6300,
          responseObject: version('11', []),
        }),
        ...between,
        event(7000, 'delete', 'pods', 'sbx-a-0', 200, OPERATOR),
      );
      return signatures(model, events);
    };
    // The namespace's DELETE of it is stored first (revision 10, the finalizer still there) but its answer
    // completes after the strip's: the strip removed the last finalizer, and the Sandbox with it.
    const storedBefore = event(6100, 'delete', 'sandboxes', 'sbx-a', 200, 'admin', {
      userAgent: NAMESPACE_CONTROLLER,
      completed: 6500,
      responseObject: version('10', [EXCLUSIVITY_FINALIZER]),
    });
    expect(teardown(storedBefore)).toEqual([]);
    // The operator put its finalizer back after the strip (revision 12), though its answer came first: the
    // deletion is its own again, and the foreign reference forbids it.
    const retaken = event(6210, 'patch', 'sandboxes', 'sbx-a', 200, OPERATOR, {
      completed: 6250,
      responseObject: version('12', [EXCLUSIVITY_FINALIZER]),
    });
    expect(teardown(retaken)).toEqual(['no-wrongful-stop/operator/foreign']);
  });
});
