/**
 * The judgements issue 25's moves need besides invariants 1–6 (invariants.ts), from the same audit events.
 * Pure: events, model and the evidence of lost writes in, violations out.
 *
 * 7 guarded-write: no status-subresource write of a user changes a sandbox pod's label or finalizer, or its
 *   eviction guard's label; no user strips a Sandbox's finalizer while its namespace is not terminating. And
 *   the other way: admission refuses no write of the status writers themselves (the disruption controller's
 *   status of a guard, a kubelet's — kwok's — status of a pod): guarding the status subresources must not
 *   stop the controllers that own them (in the soak's cluster both write as the admin user, so the log has
 *   them).
 * 8 guarded-pods: the operator creates no pod of a sandbox whose eviction guard does not stand and whose last
 *   guard write was refused (a platform policy's 403): such a pod would run unguarded.
 * 9 final-decision: a recorded Exclusive decision is never followed by another verdict of that incarnation.
 *   legacy-marker: an incarnation a status recorded unmarked (adopted) never shows the marker: the soak has no
 *   session ledger, so no legacy walk completes.
 * 10 late-reference: a late reference foreign to its sandbox that the operator erased is reported in a
 *   LateReferencesErased Event, unless the evidence shows the report was lost (an injected fault on the
 *   erase's or the Event's requests, or an operator kill, around the erase): Events are posted once, unretried.
 * The fence extension (invariant 6 for the cleanup fence): no attach succeeds that ran wholly while the
 * cleanup fence (automatic cleanup's, an erase's) stood on its Sandbox.
 */
import { isForeignReference } from '../../operator/exclusivity/index.ts';
import type { TimedEvent } from './audit-log.ts';
import type { InjectedFault } from './fault-proxy.ts';
import type { SoakModel } from './model.ts';
import {
  fencedThroughout,
  liftsInDoubt,
  undoneDecisions,
  unwalkedMarkers,
  type SandboxVersion,
} from './versions.ts';

export type JudgementId =
  'guarded-write' | 'guarded-pods' | 'final-decision' | 'late-reference' | 'fence' | 'legacy-marker';

export type Judged = {
  readonly invariant: JudgementId;
  readonly signature: string;
  readonly message: string;
};

/** What tells a write lost to the soak's own chaos from one the operator never made. */
export type Losses = { readonly faults: readonly InjectedFault[]; readonly kills: readonly number[] };

export const NO_LOSSES: Losses = { faults: [], kills: [] };

export type JudgementInput = {
  readonly model: SoakModel;
  readonly sorted: readonly TimedEvent[];
  readonly versions: ReadonlyMap<string, readonly SandboxVersion[]>;
  readonly terminating: number;
  readonly operatorUser: string;
  readonly losses: Losses;
  readonly evidence: (e: TimedEvent) => string;
  /** Who issued an event (invariants.ts `actorOf`). */
  readonly actor: (e: TimedEvent) => string;
  readonly sandboxOfPod: (pod: string) => string | undefined;
};

const ok = (e: TimedEvent) => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;

export function judge(input: JudgementInput): Judged[] {
  return [
    ...guardedWrites(input),
    ...guardedPods(input),
    ...finalDecisions(input),
    ...legacyMarkers(input),
    ...lateReferences(input),
    ...cleanupFence(input),
  ];
}

const STATUS_OWNED = new Set(['pods', 'poddisruptionbudgets']);

function guardedWrites(input: JudgementInput): Judged[] {
  const { model, sorted, terminating, evidence } = input;
  const opByAgent = new Map(model.ops.map((op) => [op.userAgent, op]));
  const stored = sorted.flatMap((e): Judged[] => {
    const op = opByAgent.get(e.userAgent ?? '');
    // A lowered spec.replicas too: the CRD must refuse it (the eviction guard expects spec.replicas pods).
    const guarded = ['status-write', 'strip-finalizer', 'lower-replicas'];
    if (op === undefined || !guarded.includes(op.kind)) return [];
    if (!['patch', 'update'].includes(e.verb) || !ok(e) || e.received >= terminating) return [];
    return [
      {
        invariant: 'guarded-write',
        signature: `guarded-write/${op.kind}/${e.objectRef?.resource ?? '?'}`,
        message: `the API server stored "${op.detail}" (#${op.id}) while the namespace was not terminating: admission must refuse it; ${evidence(e)}`,
      },
    ];
  });
  return [...stored, ...refusedStatusWriters(input, new Set(opByAgent.keys()))];
}

/** The status writers' own writes that admission refused: one violation per writer and object. */
function refusedStatusWriters(input: JudgementInput, soakAgents: ReadonlySet<string>): Judged[] {
  const { sorted, terminating, evidence, actor } = input;
  const seen = new Set<string>();
  return sorted.flatMap((e): Judged[] => {
    const ref = e.objectRef;
    if (ref?.subresource !== 'status' || !STATUS_OWNED.has(ref.resource ?? '')) return [];
    if (soakAgents.has(e.userAgent ?? '') || e.responseStatus?.code !== 403 || e.received >= terminating)
      return [];
    const key = `${actor(e)}/${ref.resource ?? '?'}/${ref.name ?? '?'}`;
    if (seen.has(key)) return [];
    seen.add(key);
    return [
      {
        invariant: 'guarded-write',
        signature: `guarded-write/${actor(e)}/status-refused`,
        message: `admission refused the ${actor(e)}'s own write of ${ref.resource ?? '?'}/status ${ref.name ?? '?'} (and any later one of it): a guard of the status subresource must refuse only changes of what the guards read, not the status its controller owns; ${evidence(e)}`,
      },
    ];
  });
}

/**
 * A guard is refused from the moment the API server received an operator write of it that a policy answered
 * 403, until a write of it succeeds; it stands from its creation (or a successful write of its status) to its
 * deletion. A pod create that completes while its guard is refused and does not stand is judged: the operator made a pod it could not guard (a
 * pod created beside the refused write, in flight together, completes inside that window too).
 */
function guardedPods({
  sorted,
  terminating,
  operatorUser,
  evidence,
  sandboxOfPod,
}: JudgementInput): Judged[] {
  type Change = { readonly at: number; readonly refused?: boolean; readonly standing?: boolean };
  const changes = new Map<string, Change[]>();
  const change = (guard: string, c: Change) => changes.set(guard, [...(changes.get(guard) ?? []), c]);
  for (const e of sorted) {
    if (e.objectRef?.resource !== 'poddisruptionbudgets') continue;
    const guard = e.objectRef.name ?? '';
    const code = e.responseStatus?.code ?? 0;
    // A status written (the disruption controller's) proves the budget stands: a create answered 5xx may
    // have been stored (seed 20261394: a 504 "context canceled", then the guard's status written).
    if (e.objectRef.subresource === 'status' && ok(e)) change(guard, { at: e.completed, standing: true });
    if (e.objectRef.subresource !== undefined) continue;
    if (e.verb === 'delete' && ok(e)) change(guard, { at: e.completed, standing: false });
    if (e.verb === 'create' && code === 201) change(guard, { at: e.completed, standing: true });
    if (e.user.username !== operatorUser || !['create', 'update', 'patch'].includes(e.verb)) continue;
    if (ok(e)) change(guard, { at: e.completed, refused: false });
    else if (code === 403 && e.received < terminating) change(guard, { at: e.received, refused: true });
  }
  const stateAt = (guard: string, t: number) => {
    const before = (changes.get(guard) ?? []).filter((c) => c.at <= t).sort((a, b) => a.at - b.at);
    const refusal = before.findLast((c) => c.refused !== undefined);
    return {
      refusedSince: refusal?.refused === true ? refusal.at : undefined,
      standing: before.findLast((c) => c.standing !== undefined)?.standing === true,
    };
  };
  return sorted.flatMap((e): Judged[] => {
    if (e.objectRef?.resource !== 'pods' || e.objectRef.subresource !== undefined) return [];
    if (e.verb !== 'create' || e.responseStatus?.code !== 201 || e.user.username !== operatorUser) return [];
    const pod = e.objectRef.name ?? '';
    const sandbox = sandboxOfPod(pod);
    if (sandbox === undefined) return [];
    const { refusedSince, standing } = stateAt(`${sandbox}-sandbox`, e.completed);
    if (refusedSince === undefined || standing) return [];
    return [
      {
        invariant: 'guarded-pods',
        signature: 'guarded-pods/operator',
        message: `pod ${pod} of Sandbox ${sandbox} created while its eviction guard was refused (since ${new Date(refusedSince).toISOString()}) and did not stand: it runs unguarded; ${evidence(e)}`,
      },
    ];
  });
}

function finalDecisions({ versions }: JudgementInput): Judged[] {
  return [...versions].flatMap(([name, list]) =>
    undoneDecisions(list).map((v): Judged => ({
      invariant: 'final-decision',
      signature: 'final-decision/operator',
      message: `Sandbox ${name} (uid ${v.uid}) recorded ${JSON.stringify(v.status?.decision)} at ${new Date(v.at).toISOString()} (revision ${v.revision}) after an Exclusive decision of the same incarnation (${JSON.stringify(list.find((e) => e.uid === v.uid && e.status?.decision?.verdict === 'Exclusive')?.status?.decision)}): the decision is final (docs/deletion.md)`,
    })),
  );
}

function legacyMarkers({ versions }: JudgementInput): Judged[] {
  return [...versions].flatMap(([name, list]) =>
    unwalkedMarkers(list).map((v): Judged => ({
      invariant: 'legacy-marker',
      signature: 'legacy-marker/operator',
      message: `Sandbox ${name} (uid ${v.uid}) shows the legacy marker at ${new Date(v.at).toISOString()} (revision ${v.revision}) after a status recorded it unmarked; no session ledger is configured, so no walk could earn it`,
    })),
  );
}

type RefBody = { metadata?: { name?: string; uid?: string }; spec?: { worktree?: string } };
type EventBody = { reason?: string; message?: string; involvedObject?: { name?: string } };

function lateReferences(input: JudgementInput): Judged[] {
  const { model, sorted, operatorUser, losses, evidence } = input;
  const judged: Judged[] = [];
  for (const op of model.ops.filter((o) => o.kind === 'late-reference' && o.sandbox !== undefined)) {
    const created = sorted.find(
      (e) =>
        e.userAgent === op.userAgent && e.objectRef?.resource === 'sessionreferences' && e.verb === 'create',
    );
    const body = created?.responseObject as RefBody | undefined;
    const uid = body?.metadata?.uid;
    const name = body?.metadata?.name ?? '';
    if (created?.responseStatus?.code !== 201 || uid === undefined) continue;
    const sandbox = model.sandbox(op.sandbox ?? '');
    if (!isForeignReference({ worktree: body?.spec?.worktree }, { worktree: sandbox.worktree })) continue;
    const erased = sorted.find(
      (e) =>
        e.user.username === operatorUser &&
        e.objectRef?.resource === 'sessionreferences' &&
        e.objectRef.name === name &&
        e.verb === 'delete' &&
        ok(e) &&
        (e.requestObject as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid === uid,
    );
    if (erased === undefined) continue;
    const reported = sorted.some((e) => {
      const event = e.requestObject as EventBody | undefined;
      return (
        e.user.username === operatorUser &&
        e.objectRef?.resource === 'events' &&
        e.verb === 'create' &&
        event?.reason === 'LateReferencesErased' &&
        event.involvedObject?.name === sandbox.name &&
        (event.message ?? '').includes(name) &&
        e.received >= erased.received
      );
    });
    if (reported || lost(losses, erased)) continue;
    judged.push({
      invariant: 'late-reference',
      signature: 'late-reference/operator/unreported',
      message: `late reference ${name} (worktree ${body?.spec?.worktree ?? 'none'}, written by #${op.id} after Sandbox ${sandbox.name}'s Exclusive decision) was erased with no LateReferencesErased Event naming it, and no fault or kill explains a lost report; ${evidence(erased)}`,
    });
  }
  return judged;
}

/**
 * An injected fault on an Event POST or a reference DELETE, or an operator kill, from 1 s before the erase to
 * 2 s after it: the Event is posted as soon as the erase's deletes are answered, and a failed delete of the same
 * erase fails the turn before it reports.
 */
function lost(losses: Losses, erased: TimedEvent): boolean {
  const from = erased.received - 1_000;
  const to = erased.completed + 2_000;
  const near = (at: number) => at >= from && at <= to;
  return (
    losses.kills.some(near) ||
    losses.faults.some(
      (f) =>
        near(f.at) &&
        ((f.method === 'POST' && f.path.endsWith('/events')) ||
          (f.method === 'DELETE' && f.path.includes('/sessionreferences/'))),
    )
  );
}

function cleanupFence({ model, versions, sorted }: JudgementInput): Judged[] {
  const doubts = liftsInDoubt(sorted);
  return model.ops.flatMap((op): Judged[] => {
    if (op.kind !== 'attach' || op.outcome !== 'attached' || op.sandbox === undefined) return [];
    const history = versions.get(op.sandbox) ?? [];
    if (!fencedThroughout(history, op.startedAt, op.endedAt, doubts.get(op.sandbox))) return [];
    return [
      {
        invariant: 'fence',
        signature: 'fence/cleanup-fence',
        message: `attach #${op.id} (${op.detail}) succeeded though Sandbox ${op.sandbox}'s cleanup fence stood from before it began until after it ended`,
      },
    ];
  });
}
