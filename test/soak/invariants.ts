/**
 * The soak's invariants, judged from the API server's audit events of one sequence's namespace and the
 * model's references at each moment. Pure: events and model in, violations out.
 *
 * 1 no-wrongful-stop: no pod of a sandbox is deleted (a DELETE or eviction the API server accepted) while
 *   its Sandbox is not being deleted, while a reference foreign to it exists (operator/exclusivity's
 *   hasForeignReference over the references the model holds at that moment), or while it is adopted without
 *   a marker (unknown history; exempt once its namespace is terminating).
 * 3 no-lost-reference: no reference is deleted except by a forget of it, a prune of it as a tombstone of the
 *   pruned worktree, the withdrawal of an attach that created it, the operator for a deleting sandbox it is
 *   not foreign to (own tombstones, the erase after a release), or the namespace's own deletion.
 * 5 cleanup-unreferenced: the operator deletes a Sandbox only by its cleanup policy, and never while a
 *   reference whose attach succeeded exists.
 * 6 fence: no attach succeeds that began after its Sandbox's deletion was recorded.
 * 12 pool-settled (judged live, pools.ts) and 13 pool-kept (claims.ts): nothing stuck; a claimed or referenced
 *   sandbox is never destroyed by a pool operation, and only a claim's release deletes a claimed one.
 * 11 workspace-kept: a workspace claim is deleted only after an Exclusive verdict of its sandbox, or by its
 *   namespace's deletion (workspace.ts). A suspension, idleness with no session attached, and a drain of a
 *   Reschedule sandbox's node let the operator stop a live sandbox's pods (1; workspace.ts says when).
 * (2 bounded-release and 4 clean-namespace are judged live by the sequence runner; 7–10 and the cleanup
 * fence in judgements.ts.)
 *
 * Two administrator overrides are known to the model, and permit exactly this much: an erase request lets the
 * operator delete any reference of its sandbox while the request is pending (invariant 3; versions.ts says
 * when); a Sandbox finalizer stripped while its namespace terminates lets the operator stop that sandbox's
 * pods once it is gone (invariant 1): the namespace's deletion takes every reference with it.
 */
import { INDEX_LIMITS } from '../../operator/api/limits.ts';
import { EXCLUSIVITY_FINALIZER } from '../../operator/api/names.ts';
import {
  buildReferenceIndex,
  hasForeignReference,
  isForeignReference,
} from '../../operator/exclusivity/index.ts';
import type { ReferenceEntry } from '../../operator/exclusivity/index.ts';
import type { TimedEvent } from './audit-log.ts';
import { evictedBeforeStart } from './evictions.ts';
import { claimRelease, poolLosses, poolOrClaimDelete } from './claims.ts';
import { Incarnations } from './incarnations.ts';
import { refusedOperatorPods } from './admitted.ts';
import { judge, NO_LOSSES, type JudgementId, type Losses } from './judgements.ts';
import type { ModelReference, OpRecord, SandboxSpec, SoakModel } from './model.ts';
import { eraseWindows, sandboxVersions, within, type SandboxVersion, type Window } from './versions.ts';
import {
  attachedWindows,
  drainedAt,
  drainWindows,
  idleAt,
  lostWorkspaces,
  nodeOfDeletedPod,
  suspendedAt,
} from './workspace.ts';

export type InvariantId =
  | 'no-wrongful-stop'
  | 'bounded-release'
  | 'no-lost-reference'
  | 'clean-namespace'
  | 'cleanup-unreferenced'
  | 'workspace-kept'
  | 'pool-settled'
  | 'pool-kept'
  | 'isolated'
  | 'operator-admitted'
  | JudgementId;

/** `signature` groups violations by invariant, actor and reason: `<invariant>/<actor>/<reason>`. */
export type Violation = {
  readonly invariant: InvariantId;
  readonly signature: string;
  readonly message: string;
};

/** Who issued the event: the soak operation kind (from its user agent), the operator, or another user. */
export function actorOf(event: TimedEvent, operatorUser: string): string {
  const agent = event.userAgent ?? '';
  if (agent.startsWith('soak/')) return agent.split('/')[3] ?? 'soak';
  if (event.user.username === operatorUser) return 'operator';
  const controller = /\/([a-z-]+-controller)$/.exec(agent)?.[1];
  return controller ?? /^([a-z][a-z-]*)\//.exec(agent)?.[1] ?? event.user.username;
}

type RefObject = {
  metadata?: { name?: string; uid?: string; labels?: Record<string, string> };
  spec?: { sandbox?: string; worktree?: string; state?: string; session?: string };
};

const ok = (event: TimedEvent) => {
  const code = event.responseStatus?.code ?? 0;
  return code >= 200 && code < 300;
};
const on = (event: TimedEvent, resource: string, subresource?: string) =>
  event.objectRef?.resource === resource && event.objectRef.subresource === subresource;

export function evidence(event: TimedEvent): string {
  const ref = event.objectRef;
  return `${event.verb} ${ref?.resource ?? '?'}${ref?.subresource ? `/${ref.subresource}` : ''}/${ref?.name ?? '*'} by ${event.user.username} (${event.userAgent ?? 'no user agent'}) at ${event.stageTimestamp} -> ${event.responseStatus?.code ?? '?'} [${event.auditID}]`;
}

/**
 * The objects a DELETE removed. A DELETE that removes at once answers with a Status, not the object, so its
 * state is the last one the API server recorded for that name (`lastWritten`); a DELETE collection lists
 * the objects it removed.
 */
function deletedObjects(event: TimedEvent, lastWritten: ReadonlyMap<string, RefObject>): RefObject[] {
  const body = event.responseObject as { items?: RefObject[] } | RefObject | undefined;
  if (event.verb === 'deletecollection') return (body as { items?: RefObject[] } | undefined)?.items ?? [];
  const name = event.objectRef?.name ?? '';
  // A DELETE preconditioned on a uid removed that incarnation, whatever completed around it: a create of
  // the same name can complete first in the log yet commit after (its admission is slower than a delete).
  const uid = preconditionUid(event);
  if (uid !== undefined) return [lastWritten.get(incarnationKey(name, uid)) ?? { metadata: { name, uid } }];
  return [lastWritten.get(name) ?? { metadata: { name } }];
}

function preconditionUid(event: TimedEvent): string | undefined {
  const uid = (event.requestObject as { preconditions?: { uid?: unknown } } | undefined)?.preconditions?.uid;
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
}

const incarnationKey = (name: string, uid: string) => `${name}\u0000${uid}`;

/** Presence with the uid of the incarnation its establishing write produced (when the log shows it). */
type RefinedReference = ModelReference & {
  readonly presence: (ModelReference['presence'][number] & { readonly uid?: string | undefined })[];
};

const WRITE_VERBS = new Set(['create', 'patch', 'update']);

/** Presence intervals with `from` refined to the moment the API server recorded the establishing write. */
function refinedReferences(model: SoakModel, events: readonly TimedEvent[]): RefinedReference[] {
  const opOf = new Map(model.ops.map((op) => [op.id, op]));
  return [...model.references.values()].map((ref) => ({
    ...ref,
    presence: ref.presence.map((p) => {
      const op = opOf.get(p.fromOp);
      const write = events.findLast(
        (e) =>
          on(e, 'sessionreferences') &&
          ok(e) &&
          e.userAgent === op?.userAgent &&
          e.objectRef?.name === ref.name &&
          (e.verb === 'create' || e.verb === 'patch'),
      );
      const uid = (write?.responseObject as RefObject | undefined)?.metadata?.uid;
      return { ...p, from: write?.completed ?? p.from, uid };
    }),
  }));
}

const entryOf = (ref: ModelReference): ReferenceEntry => ({
  name: ref.name,
  session: ref.session,
  worktree: ref.worktree,
  state: ref.state,
  role: 'Root',
  route: `soak/${ref.session}`,
  parentSession: undefined,
});

/** References of `sandbox` present throughout [from, to]. */
function presentThroughout(refs: readonly ModelReference[], sandbox: string, from: number, to: number) {
  return refs.filter(
    (ref) => ref.sandbox === sandbox && ref.presence.some((p) => p.from < from && p.until > to),
  );
}

/** The sandbox a pod name belongs to (`<sandbox>-<ordinal>`). */
function sandboxOfPod(model: SoakModel, pod: string): SandboxSpec | undefined {
  return [...model.sandboxes.values()].find((s) =>
    Array.from({ length: 8 }, (_, i) => `${s.name}-${i}`).includes(pod),
  );
}

export function checkSequence(
  model: SoakModel,
  events: readonly TimedEvent[],
  operatorUser: string,
  losses: Losses = NO_LOSSES,
) {
  const sorted = [...events].sort((a, b) => a.completed - b.completed);
  const violations: Violation[] = [];
  const refs = refinedReferences(model, sorted);
  const opByAgent = new Map(model.ops.map((op) => [op.userAgent, op]));
  const terminating =
    sorted.find((e) => on(e, 'namespaces') && e.verb === 'delete' && ok(e))?.completed ?? Infinity;
  const lives = new Incarnations(model, sorted);
  const versions = sandboxVersions(sorted);
  const erasing = new Map([...versions].map(([name, list]) => [name, eraseWindows(list)]));

  // 3 first: justified removals end a reference's presence; unjustified ones do not (the model keeps it).
  const lastWritten = new Map<string, RefObject>();
  for (const e of sorted) {
    if (on(e, 'sessionreferences') && WRITE_VERBS.has(e.verb) && ok(e)) {
      const object = e.responseObject as RefObject | undefined;
      const name = object?.metadata?.name;
      if (name !== undefined) {
        lastWritten.set(name, object ?? {});
        const uid = object?.metadata?.uid;
        if (uid !== undefined) lastWritten.set(incarnationKey(name, uid), object ?? {});
      }
      continue;
    }
    if (!on(e, 'sessionreferences') || (e.verb !== 'delete' && e.verb !== 'deletecollection') || !ok(e))
      continue;
    for (const object of deletedObjects(e, lastWritten)) {
      const reason = unjustifiedRemoval(e, object, {
        op: opByAgent.get(e.userAgent ?? ''),
        operatorUser,
        terminating,
        sandbox: model.sandboxes.get(object.spec?.sandbox ?? ''),
        lives,
        events: sorted,
        versions,
        erasing: erasing.get(object.spec?.sandbox ?? '') ?? [],
      });
      const ref = refs.find((r) => r.name === object.metadata?.name);
      if (reason !== undefined) {
        violations.push({
          invariant: 'no-lost-reference',
          signature: `no-lost-reference/${actorOf(e, operatorUser)}`,
          message: `reference ${object.metadata?.name ?? '?'} (${object.spec?.state ?? '?'}, worktree ${object.spec?.worktree ?? 'none'}) deleted: ${reason}; ${evidence(e)}`,
        });
      } else if (ref) {
        // Only the removed incarnation's presence ends; one a later create established is not this one.
        const removed = object.metadata?.uid;
        for (const p of ref.presence) {
          const other = removed !== undefined && p.uid !== undefined && p.uid !== removed;
          if (!other && p.from < e.received && p.until > e.received) p.until = e.received;
        }
      }
    }
  }

  const stripped = strippedInTermination(model, sorted, terminating, versions);
  const suspended = (sandbox: string, t: number) => suspendedAt(versions.get(sandbox) ?? [], t);
  const drains = drainWindows(model.ops);
  const drained = (node: string, t: number) => drainedAt(drains.get(node) ?? [], t);
  const idle = (sandbox: string, t: number) => idleAt(attachedWindows(model.ops, sandbox), t);
  violations.push(
    ...wrongfulStops(
      model,
      sorted,
      refs,
      { terminating, lives, stripped, suspended, drained, idle },
      operatorUser,
    ),
  );
  for (const loss of lostWorkspaces(sorted, versions, terminating))
    violations.push({
      invariant: 'workspace-kept',
      signature: `workspace-kept/${actorOf(loss.event, operatorUser)}`,
      message: `workspace claim ${loss.claim} of Sandbox ${loss.sandbox} deleted before any Exclusive verdict of it; ${evidence(loss.event)}`,
    });

  for (const loss of poolLosses(sorted, versions, operatorUser, terminating, new Set(opByAgent.keys())))
    violations.push({
      invariant: 'pool-kept',
      signature: `pool-kept/${actorOf(loss.event, operatorUser)}/${loss.reason}`,
      message: `${loss.detail}; ${evidence(loss.event)}`,
    });

  for (const e of sorted) {
    if (!on(e, 'sandboxes') || e.verb !== 'delete' || !ok(e) || e.user.username !== operatorUser) continue;
    // A pool's shrink or rollout, or a sandbox claim's release: judged by pool-kept (claims.ts).
    if (poolOrClaimDelete(e, versions)) continue;
    const sandbox = model.sandboxes.get(e.objectRef?.name ?? '');
    if (sandbox?.cleanupTtlSeconds === undefined)
      violations.push({
        invariant: 'cleanup-unreferenced',
        signature: 'cleanup-unreferenced/operator/no-policy',
        message: `the operator deleted a Sandbox without a cleanup policy; ${evidence(e)}`,
      });
    const held = presentThroughout(refs, e.objectRef?.name ?? '', e.received, e.completed);
    if (held.length > 0)
      violations.push({
        invariant: 'cleanup-unreferenced',
        signature: 'cleanup-unreferenced/operator/referenced',
        message: `cleanup deleted Sandbox ${e.objectRef?.name ?? '?'} while references existed: ${held.map((r) => r.name).join(', ')}; ${evidence(e)}`,
      });
  }

  for (const op of model.ops) {
    if (op.kind !== 'attach' || op.outcome !== 'attached' || op.sandbox === undefined) continue;
    const deletedAt = lives.at(op.sandbox, op.startedAt)?.deleted;
    if (deletedAt !== undefined && deletedAt < op.startedAt)
      violations.push({
        invariant: 'fence',
        signature: 'fence/attach',
        message: `attach #${op.id} (${op.detail}) succeeded though Sandbox ${op.sandbox}'s deletion was recorded ${op.startedAt - deletedAt} ms before it began`,
      });
  }
  violations.push(...refusedOperatorPods(sorted, operatorUser, evidence));
  violations.push(
    ...judge({
      model,
      sorted,
      versions,
      terminating,
      operatorUser,
      losses,
      evidence,
      actor: (e) => actorOf(e, operatorUser),
      sandboxOfPod: (pod) => sandboxOfPod(model, pod)?.name,
    }),
  );
  return violations;
}

/**
 * When an administrator's strip of each Sandbox's finalizer was stored while its namespace terminated (the
 * override a terminating namespace allows): from then on its pods are the namespace deletion's to release —
 * unless the operator put its finalizer back (a live Sandbox the namespace had not deleted yet), which makes
 * the deletion its own again.
 */
function strippedInTermination(
  model: SoakModel,
  sorted: readonly TimedEvent[],
  terminating: number,
  versions: ReadonlyMap<string, readonly SandboxVersion[]>,
) {
  const strips = new Set(model.ops.filter((op) => op.kind === 'strip-finalizer').map((op) => op.userAgent));
  const stripped = new Map<string, number>();
  for (const e of sorted) {
    const name = e.objectRef?.name ?? '';
    if (!on(e, 'sandboxes') || e.verb !== 'patch' || !ok(e) || e.received < terminating) continue;
    if (!strips.has(e.userAgent ?? '') || stripped.has(name)) continue;
    // Later in the store, not on the clock: a write stored before the strip may complete after it.
    const revision = Number(
      (e.responseObject as { metadata?: { resourceVersion?: string } } | undefined)?.metadata
        ?.resourceVersion,
    );
    const later = (v: SandboxVersion) =>
      Number.isFinite(revision) && Number.isFinite(v.revision) ? v.revision > revision : v.at > e.completed;
    const retaken = (versions.get(name) ?? []).some(
      (v) => later(v) && v.finalizers.includes(EXCLUSIVITY_FINALIZER),
    );
    if (!retaken) stripped.set(name, e.completed);
  }
  return stripped;
}

type RemovalContext = {
  readonly op: OpRecord | undefined;
  readonly operatorUser: string;
  readonly terminating: number;
  readonly sandbox: SandboxSpec | undefined;
  readonly lives: Incarnations;
  readonly events: readonly TimedEvent[];
  readonly versions: ReadonlyMap<string, readonly SandboxVersion[]>;
  /** When an erase request of the reference's sandbox was pending (any incarnation). */
  readonly erasing: readonly Window[];
};

/** Why this removal of `object` was not one the product allows; undefined when it was. */
function unjustifiedRemoval(e: TimedEvent, object: RefObject, ctx: RemovalContext): string | undefined {
  const name = object.metadata?.name ?? '';
  if (e.received >= ctx.terminating) return undefined;
  const op = ctx.op;
  if (op !== undefined) {
    switch (op.kind) {
      case 'forget':
        return op.reference === name
          ? undefined
          : `forget #${op.id} of ${op.reference ?? '?'} deleted another`;
      case 'prune':
        return object.spec?.state === 'Detached' && object.spec.worktree === op.worktree
          ? undefined
          : `prune #${op.id} of worktree ${op.worktree ?? 'none'} deleted a reference that was not its tombstone`;
      case 'attach':
      case 'late-reference': {
        const created = ctx.events.some(
          (c) =>
            on(c, 'sessionreferences') &&
            c.verb === 'create' &&
            c.responseStatus?.code === 201 &&
            c.userAgent === op.userAgent &&
            c.objectRef?.name === name,
        );
        return created
          ? undefined
          : `attach #${op.id} (${op.detail}) withdrew a reference it did not create (it existed before)`;
      }
      case 'detach':
      case 'delete-sandbox':
      case 'delete-pod':
      case 'evict-pod':
      case 'relabel-pod':
      case 'delete-pdb':
      case 'lower-replicas':
      case 'annotate':
      case 'replace':
      case 'apply':
      case 'pause':
      case 'delete-namespace':
      case 'status-write':
      case 'strip-finalizer':
      case 'platform':
      case 'erase':
      case 'suspend':
      case 'resume':
      case 'drain':
      case 'delete-claim':
      case 'scale-pool':
      case 'rollout':
      case 'claim':
      case 'delete-sandbox-claim':
      case 'delete-pool':
      case 'harness':
        return `${op.kind} #${op.id} is no way to remove a reference`;
    }
  }
  if (e.user.username === ctx.operatorUser) {
    // Issue 28: a sandbox claim's release forgets the reference made for it (claims.ts says when).
    if (claimRelease(object, e, ctx.events, ctx.versions)) return undefined;
    const sandbox = ctx.sandbox;
    if (sandbox === undefined) return 'the operator deleted a reference of an unknown sandbox';
    // An administrator asked for every reference to go: any of them, while the request is pending.
    if (within(ctx.erasing, e.received)) return undefined;
    // Created after the deletion of the incarnation it was written to was recorded: its attach is refused (the
    // fence invariant checks that), and the erase after the release — once the Sandbox is gone, so a later
    // incarnation may stand by then — may take it before the attach withdraws it. (A reference that existed
    // before, even if re-attached since, is evidence the decision had to see: not exempt.)
    const created = ctx.events.findLast(
      (c) =>
        on(c, 'sessionreferences') &&
        c.objectRef?.name === name &&
        c.verb === 'create' &&
        c.responseStatus?.code === 201 &&
        c.received < e.received,
    );
    if (created !== undefined && ctx.lives.deleting(sandbox.name, created.received)) return undefined;
    if (!ctx.lives.deleting(sandbox.name, e.received))
      return `the operator deleted a reference of Sandbox ${sandbox.name}, which was not being deleted`;
    if (isForeignReference({ worktree: object.spec?.worktree }, { worktree: sandbox.worktree }))
      return `the operator deleted a reference foreign to Sandbox ${sandbox.name}`;
    if (ctx.lives.adopted(sandbox.name, e.received))
      return `the operator deleted a reference of adopted Sandbox ${sandbox.name} (unknown history)`;
    return undefined;
  }
  return `${e.user.username} is no party that removes references`;
}

type StopContext = {
  readonly terminating: number;
  readonly lives: Incarnations;
  /** Sandboxes whose finalizer an administrator stripped while the namespace terminated, and when. */
  readonly stripped: ReadonlyMap<string, number>;
  /** Whether the sandbox's spec suspended it at that moment (workspace.ts): the operator stops its pods. */
  readonly suspended: (sandbox: string, t: number) => boolean;
  /** Whether a drain cordoned the node at that moment (workspace.ts): Reschedule moves the pod off it. */
  readonly drained: (node: string, t: number) => boolean;
  /** Whether no reference of the sandbox was certainly Attached then (workspace.ts): spec.idle stops it. */
  readonly idle: (sandbox: string, t: number) => boolean;
};

function wrongfulStops(
  model: SoakModel,
  sorted: readonly TimedEvent[],
  refs: readonly ModelReference[],
  context: StopContext,
  operatorUser: string,
): Violation[] {
  const violations: Violation[] = [];
  const stopped = new Set<string>();
  const createdAt = new Map<string, number>();
  for (const e of sorted) {
    if (on(e, 'pods') && e.verb === 'create' && e.responseStatus?.code === 201) {
      stopped.delete(e.objectRef?.name ?? '');
      createdAt.set(e.objectRef?.name ?? '', e.received);
      continue;
    }
    const names: string[] = [];
    if (on(e, 'pods') && e.verb === 'delete' && ok(e)) names.push(e.objectRef?.name ?? '');
    if (on(e, 'pods') && e.verb === 'deletecollection' && ok(e))
      names.push(...deletedObjects(e, new Map()).map((o) => o.metadata?.name ?? ''));
    if (on(e, 'pods', 'eviction') && e.verb === 'create' && ok(e)) {
      // A pod that had not started goes without its budget: the API's rule, and nothing had run in it.
      if (evictedBeforeStart(e, sorted)) stopped.add(e.objectRef?.name ?? '');
      else names.push(e.objectRef?.name ?? '');
    }
    for (const pod of names) {
      if (stopped.has(pod)) continue;
      stopped.add(pod);
      const sandbox = sandboxOfPod(model, pod);
      if (!sandbox) continue;
      const cause = stopCause(e, pod, sorted, createdAt.get(pod) ?? -Infinity);
      const why = wrongfulStop(sandbox, cause, refs, context, cause.user.username === operatorUser);
      if (why !== undefined)
        violations.push({
          invariant: 'no-wrongful-stop',
          signature: `no-wrongful-stop/${actorOf(cause, operatorUser)}/${why.includes('adopted') ? 'adopted' : why.includes('foreign') ? 'foreign' : 'live'}`,
          message: `pod ${pod} of Sandbox ${sandbox.name} stopped ${why}; ${evidence(cause)}`,
        });
    }
  }
  return violations;
}

/**
 * Who stopped the pod. kwok, the soak's kubelet, only ever finalizes a pod already deleted: when its DELETE
 * is the first stop the log shows, the deletion was a request answered 5xx after the API server had stored
 * it (a 504 "context canceled" when its client went away). The latest such request since the pod's create is
 * the stop, judged as its actor's; with none, kwok's stands (and is judged as nobody's to make).
 */
function stopCause(e: TimedEvent, pod: string, sorted: readonly TimedEvent[], since: number): TimedEvent {
  if (!(e.userAgent ?? '').startsWith('kwok/')) return e;
  const unanswered = (u: TimedEvent) =>
    (u.responseStatus?.code ?? 0) >= 500 &&
    u.received > since &&
    u.received < e.received &&
    u.objectRef?.name === pod &&
    ((on(u, 'pods') && u.verb === 'delete') || (on(u, 'pods', 'eviction') && u.verb === 'create'));
  const request = sorted
    .filter(unanswered)
    .sort((a, b) => a.received - b.received)
    .at(-1);
  // Its answer holds no pod: the pod is as kwok's answer shows it (where it ran, for a drain's move).
  return request === undefined ? e : { ...request, responseObject: e.responseObject };
}

function wrongfulStop(
  sandbox: SandboxSpec,
  e: TimedEvent,
  refs: readonly ModelReference[],
  { terminating, lives, stripped, suspended, drained, idle }: StopContext,
  byOperator: boolean,
): string | undefined {
  // The ways a live sandbox's pods stop (issue 27), each by the operator only: a suspension while the spec
  // says so, idleness while no session is attached, a drain's move of a Reschedule sandbox's pod.
  if (byOperator && !lives.deleting(sandbox.name, e.received)) {
    if (suspended(sandbox.name, e.received)) return undefined;
    if (sandbox.idleSeconds !== undefined && idle(sandbox.name, e.received)) return undefined;
    const node = nodeOfDeletedPod(e);
    if (sandbox.workspace && node !== undefined && drained(node, e.received)) return undefined;
  }
  const adopted = lives.adopted(sandbox.name, e.received);
  if (e.received >= terminating && adopted) return undefined;
  // Its finalizer stripped in the terminating namespace, the Sandbox is gone: no decision can be made, and
  // the namespace's deletion takes every reference with it (operator/controller/deletion/orphans.ts).
  if (e.received > (stripped.get(sandbox.name) ?? Infinity)) return undefined;
  if (!lives.deleting(sandbox.name, e.received) && e.received < terminating)
    return 'while its Sandbox was not being deleted';
  if (adopted) return 'while it was adopted without a marker (unknown references)';
  const held = presentThroughout(refs, sandbox.name, e.received, e.completed);
  const index = buildReferenceIndex(held.map(entryOf), INDEX_LIMITS);
  if (hasForeignReference(index, { worktree: sandbox.worktree }))
    return `while foreign references existed: ${held
      .filter((r) => isForeignReference(r, { worktree: sandbox.worktree }))
      .map((r) => `${r.name} (${r.session}, worktree ${r.worktree ?? 'none'}, ${r.state})`)
      .join(', ')}`;
  return undefined;
}
