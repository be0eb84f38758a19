/**
 * The live turn of a Sandbox not being deleted: its finalizer first, then the erase an administrator asked
 * for, automatic cleanup, and together its status, its eviction guard and its missing pods (or, suspended,
 * the deletion of its pods).
 */
import type { Logger } from 'pino';
import { EXCLUSIVITY_FINALIZER } from '../../api/names.ts';
import type { Sandbox, SandboxState } from '../../api/objects.ts';
import { awaitChange, requeueAfter, sooner, type Action } from '../../runtime/action.ts';
import { MisconfigurationError } from '../../runtime/error-policy.ts';
import { KubeRequestError } from '../../kube/errors.ts';
import type { PodSummary } from '../cache/pod-summary.ts';
import { keyOf } from '../cache/store.ts';
import type { ReconcilerContext } from '../context.ts';
import { currentIndex } from '../current-index.ts';
import { eraseReferences } from '../erase.ts';
import { keepEvictionGuard } from '../eviction-guard.ts';
import { keepNetworkIsolation } from '../network-isolation.ts';
import { addFinalizerPatch, removeFinalizerFromIncarnation } from '../finalizer.ts';
import { incarnationOf } from '../incarnation.ts';
import { inheritedErase, missingOrdinals, pendingErase } from '../lifecycle.ts';
import { reaperModeRefusal, sandboxPod } from '../pod-template.ts';
import { legacyEvidence, nextLegacyWalkInMs } from '../walk-lane/evidence.ts';
import { writeStatus } from '../write-status.ts';
import { holdRemainingMs, replacementWaitMs } from '../disruption.ts';
import { movePods, planDrain } from './drain.ts';
import { noticeReferences } from './notices.ts';
import { cleanUpWhenDue, raiseFencePatch } from './cleanup.ts';
import { judgePodNameHolder } from './pod-name.ts';
import type { PodNameHolder } from '../ports.ts';
import { sandboxRef } from '../erase.ts';
import { claimTemplatesOf } from '../../api/volume-claims.ts';
import { volumeCollision } from '../claims.ts';
import { keepClaims } from './claims.ts';
import { judgeSuspension } from '../suspension.ts';
import { stopPods } from './suspend.ts';

/** How soon a turn that found a claim going looks again: no watch of claims brings its deletion. */
const CLAIM_WAIT_MS = 2_000;

/**
 * A pod of a live sandbox that is terminating (an override delete, an eviction) is already being stopped by
 * its kubelet: the finalizer only keeps its API object, which would then never be replaced and would block a
 * drain. Release it; its replacement is created once it is gone (its delete event brings that reconcile).
 */
async function releaseTerminatingPods(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  pods: readonly PodSummary[],
  suspended: boolean,
  log: Logger,
): Promise<void> {
  for (const pod of pods) {
    if (!pod.deleting) continue;
    const patch = removeFinalizerFromIncarnation(pod, EXCLUSIVITY_FINALIZER);
    if (!patch) continue;
    await ctx.ports.pods.patchMetadata(sandbox.metadata.namespace, pod.name, patch);
    if (suspended) log.info({ pod: pod.name }, 'sandbox suspended; released its stopping pod');
    else
      log.warn(
        { pod: pod.name },
        'a pod of a live sandbox is terminating (an override delete or an eviction); released it, a replacement follows',
      );
  }
}

/** The missing pods, in ordinal order; none once the namespace refuses creates for its deletion. */
async function createPods(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
  ordinals: readonly number[],
  log: Logger,
): Promise<void> {
  for (const ordinal of ordinals) {
    const pod = sandboxPod(sandbox, ordinal, ctx.sidecar);
    let result: Awaited<ReturnType<typeof ctx.ports.pods.create>>;
    try {
      result = await ctx.ports.pods.create(pod);
    } catch (error) {
      if (!(error instanceof KubeRequestError && error.namespaceTerminating)) throw error;
      log.info({ ordinal }, 'namespace is terminating; no pod is created');
      return;
    }
    if (result === 'Created') log.info({ ordinal }, 'sandbox pod created');
    else await podNameTaken(ctx, sandbox, pod.metadata?.name ?? '', result.taken, log);
  }
}

/** A pod create met a pod of that name: the sandbox's own, one going, one to replace, or someone else's. */
async function podNameTaken(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
  pod: string,
  holder: PodNameHolder,
  log: Logger,
): Promise<void> {
  const { namespace, name, uid } = sandbox.metadata;
  const judgement = judgePodNameHolder({ name, uid: uid ?? '' }, pod, holder);
  switch (judgement.kind) {
    case 'Ours':
      log.info({ pod }, 'sandbox pod already exists');
      return;
    case 'Wait':
      log.info({ pod }, judgement.why);
      return;
    case 'Replace':
      // Preconditioned on the uid read: a pod re-created under the name meanwhile is not deleted.
      await ctx.ports.pods.delete(namespace, pod, judgement.uid);
      log.warn({ pod, uid: judgement.uid }, judgement.why);
      ctx.ports.events.record(sandboxRef(sandbox), 'Warning', 'UnownedPodReplaced', judgement.why);
      return;
    case 'Taken':
      throw new MisconfigurationError(judgement.misconfiguration, { cause: holder });
  }
}

/**
 * Waits for every write, then fails the turn with the first failure in the order given; any other failure is
 * logged here, since the runner sees only the one thrown.
 */
async function firstFailure(writes: readonly Promise<void>[], log: Logger): Promise<void> {
  const failures = (await Promise.allSettled(writes)).flatMap((each) =>
    each.status === 'rejected' ? [each.reason as unknown] : [],
  );
  const [first, ...others] = failures;
  for (const err of others) log.warn({ err }, 'another write of this turn failed too');
  if (failures.length > 0) throw first;
}

/**
 * The reconciliation status a live turn writes. A due walk is started in its lane and the turn goes on with
 * the persisted status: a live sandbox decides nothing from it, and the walk's end enqueues the turn that
 * writes its outcome (the marker only then).
 */
function liveReconciliation(ctx: ReconcilerContext, sandbox: SandboxState, log: Logger) {
  const look = legacyEvidence(ctx, sandbox, false);
  if (look.kind === 'ready') return look.result.reconciliation;
  if (look.kind === 'walk-due') ctx.legacy?.start(sandbox, log);
  return look.persisted;
}

/**
 * The finalizer first: nothing of a sandbox may exist before the finalizer that holds its deletion for the
 * decision. The turn then goes on from the Sandbox the PATCH answered (the API server's object, not a cache
 * that has yet to see the write), so a new sandbox gets its status, guard and pods in the same turn.
 */
async function withFinalizer(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  log: Logger,
): Promise<SandboxState | Sandbox | undefined> {
  const addFinalizer = addFinalizerPatch(sandbox.metadata, EXCLUSIVITY_FINALIZER);
  if (!addFinalizer) return sandbox;
  const written = await ctx.ports.sandboxes.patchMetadata(incarnationOf(sandbox), addFinalizer);
  log.info('added the exclusivity finalizer');
  const fresh = written.sandbox?.();
  // Anything unexpected in the answer (deleted meanwhile, unreadable): its update event brings the next turn.
  if (!fresh?.ok) return undefined;
  const { metadata } = fresh.value;
  const finalized = metadata.finalizers?.includes(EXCLUSIVITY_FINALIZER) === true;
  if (metadata.uid !== sandbox.metadata.uid || metadata.deletionTimestamp !== undefined || !finalized)
    return undefined;
  return fresh.value;
}

/**
 * The erase behind the fence automatic cleanup raises (an attach that reads it withdraws), written on the
 * version this turn read: a stale cache, whose status may not show an erase already done, conflicts before
 * anything is erased. The next turn lifts the fence (./cleanup.ts), once the status records the request.
 */
async function fencedErase(ctx: ReconcilerContext, sandbox: SandboxState, request: string, log: Logger) {
  await ctx.ports.sandboxes.patchMetadata(incarnationOf(sandbox), raiseFencePatch(sandbox, ctx.now()));
  return eraseReferences(ctx, sandbox, request, log);
}

/**
 * The whole Sandbox, for the pods a turn creates: the cache keeps no template (objects.ts, `SandboxState`), so
 * it is read live, and used only from the incarnation this turn decided on, not being deleted; else undefined
 * (that change's event brings the next turn). A Sandbox the finalizer's PATCH answered has it already.
 */
async function withTemplate(
  ctx: ReconcilerContext,
  sandbox: SandboxState | Sandbox,
): Promise<Sandbox | undefined> {
  if ('podTemplate' in sandbox.spec) return { ...sandbox, spec: sandbox.spec };
  const { namespace, name, uid } = sandbox.metadata;
  const live = await ctx.ports.sandboxes.readLive(namespace, name);
  if (live?.podTemplate === undefined || live.uid !== uid || live.deleting) return undefined;
  return { ...sandbox, spec: { ...sandbox.spec, podTemplate: live.podTemplate } };
}

export async function reconcileLive(
  ctx: ReconcilerContext,
  cached: SandboxState,
  log: Logger,
): Promise<Action> {
  const sandbox = await withFinalizer(ctx, cached, log);
  if (!sandbox) return awaitChange();
  const { namespace, name } = sandbox.metadata;
  const key = keyOf(namespace, name);
  const request = pendingErase(sandbox);
  const erased = request === undefined ? undefined : await fencedErase(ctx, sandbox, request, log);
  const index = await currentIndex(ctx, sandbox, erased);
  const reconciliation = liveReconciliation(ctx, sandbox, log);
  // Cleanup before anything else writes the Sandbox: its fence is preconditioned on the version read.
  const { clock: cleanup, action } = await cleanUpWhenDue(ctx, sandbox, index, log);
  if (action) return action;

  const pods = ctx.store.pods(key);
  // A suspended sandbox's pods are stopped and none is created (./suspend.ts); all else goes on as usual.
  const suspension = judgeSuspension(sandbox, index, ctx.now());
  const drain = await planDrain(ctx, sandbox, pods, () => withTemplate(ctx, sandbox));
  // A pod just moved off a drained node comes back only once drainers have found its name gone.
  const replacementWait = replacementWaitMs(
    sandbox.status?.conditions?.find((c) => c.type === 'Disrupting'),
    drain.plan.kind,
    ctx.now(),
  );
  const missing =
    suspension.kind === 'Suspended' || replacementWait !== undefined ? [] : missingOrdinals(sandbox, pods);
  const whole = missing.length === 0 ? undefined : await withTemplate(ctx, sandbox);
  if (missing.length > 0 && whole === undefined)
    log.info(
      { missing },
      'no pod created: the Sandbox read live is another incarnation, being deleted or gone',
    );
  const refusal =
    whole === undefined
      ? undefined
      : (reaperModeRefusal(whole, ctx.sidecar) ??
        volumeCollision(
          claimTemplatesOf(whole.spec),
          whole.spec.podTemplate.spec['volumes'] as readonly { readonly name?: unknown }[] | undefined,
        ));
  // Independent writes, in flight together. Each is bound by what it writes, not by the others: the status by
  // the uid and the fields it read, the guard by the version it read, the pods by their names. The marker a
  // sandbox is born with is what its annotations say until its first status write, whenever that lands.
  // Only the pods wait for the guard, and only when the cache does not show it standing (it answers at once
  // then): a guard a policy refuses for good would otherwise leave them running unguarded for ever.
  const status = writeStatus(ctx, sandbox, {
    index,
    reconciliation,
    decision: undefined,
    pods,
    erasedFor: request ?? inheritedErase(sandbox),
    suspension,
    drain,
  });
  const guard = keepEvictionGuard(ctx, sandbox, log);
  // Pods wait for their NetworkPolicy too: a pod must never run before its isolation stands. (Without the
  // port — tests of other rules — the pods wait on the guard alone, in the order those tests script.)
  const isolation = ctx.ports.networkPolicies ? keepNetworkIsolation(ctx, sandbox, log) : undefined;
  const guarded = isolation
    ? Promise.all([guard, isolation]).then(([kept, isolated]) => (kept.kind === 'Kept' ? isolated : kept))
    : guard;
  // The workspace before the pods that mount it: a pod is created only once every claim stands. A sandbox with
  // no claim templates waits on the guard (and its isolation) alone, as before.
  const claims = claimTemplatesOf(sandbox.spec).length > 0 ? keepClaims(ctx, sandbox, log) : undefined;
  const createIf = (start: boolean) =>
    start && whole !== undefined ? createPods(ctx, whole, missing, log) : undefined;
  // Started only when nothing refuses the pods (below): a refused template must never reach a pod create.
  const podsAfterGuards = () =>
    claims
      ? Promise.all([guarded, claims]).then(
          ([outcome, claimed]) => createIf(outcome.kind === 'Kept' && claimed === 'Ready'),
          () => undefined, // the guard's, the policy's and the claims' own failures are the writes above
        )
      : guarded.then(
          (outcome) => createIf(outcome.kind === 'Kept'),
          () => undefined, // the guard's and the policy's own failures are the writes above
        );
  // The attached references are told of a drain (status.disruption) once the status says so; a failed status
  // write is the status's own failure (below), not the notice's.
  const noticed = status.then(
    () =>
      noticeReferences(
        ctx,
        sandbox,
        drain,
        { suspended: suspension.kind === 'Suspended', replacementWaiting: replacementWait !== undefined },
        log,
      ),
    () => undefined,
  );
  const move = () => (suspension.kind === 'Suspended' ? undefined : movePods(ctx, sandbox, drain.plan, log));
  await firstFailure(
    [
      // A pod moves off a drained node only once the status says so (the Disrupting condition and its Event)
      // and the notice was tried: a notice refused (an install whose RBAC lacks the references' status) fails
      // the turn but never holds the drain up. A suspended sandbox's pods are stopped below.
      status.then(() => noticed.then(move, move)),
      noticed,
      guard.then((outcome) => {
        if (outcome.kind === 'Refused') throw outcome.error;
      }),
      ...(isolation
        ? [
            isolation.then((outcome) => {
              if (outcome.kind === 'Refused') throw outcome.error;
            }),
          ]
        : []),
      claims?.then(() => undefined) ?? Promise.resolve(),
      releaseTerminatingPods(ctx, sandbox, pods, suspension.kind === 'Suspended', log),
      suspension.kind === 'Suspended' ? stopPods(ctx, sandbox, suspension, pods, log) : Promise.resolve(),
      refusal
        ? Promise.reject(new MisconfigurationError(refusal, { cause: sandbox.spec.shellReaper }))
        : podsAfterGuards(),
    ],
    log,
  );

  let next = requeueAfter(ctx.timing.resyncMs);
  if (cleanup.kind === 'Waiting') next = sooner(next, requeueAfter(cleanup.remainingMs));
  if (suspension.kind === 'Running' && suspension.idleInMs !== undefined)
    next = sooner(next, requeueAfter(suspension.idleInMs));
  const holdLeft = holdRemainingMs(drain.plan, ctx.now());
  if (holdLeft !== undefined) next = sooner(next, requeueAfter(holdLeft));
  if (replacementWait !== undefined) next = sooner(next, requeueAfter(replacementWait));
  const legacyIn = nextLegacyWalkInMs(ctx, reconciliation, false);
  if (legacyIn !== undefined) next = sooner(next, requeueAfter(legacyIn));
  if (claims !== undefined && (await claims) === 'Waiting') next = sooner(next, requeueAfter(CLAIM_WAIT_MS));
  return next;
}
