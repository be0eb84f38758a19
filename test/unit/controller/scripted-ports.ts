/**
 * Scripted ports for the reconciler's unit tests: a scenario lists the port calls it expects, in order, each
 * with its reply. The first call that differs fails the reconcile with what was expected and what came:
 *
 *   expected pods.delete(sbx-0), got references.deleteAll(sbx)
 *
 * and `finish()` fails if expected calls never came. The ports are the controller's own interfaces
 * (operator/controller/ports.ts), so the script reads as the deletion's steps in the API server's words.
 */
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { pino } from 'pino';
import { INDEX_LIMITS, type SessionReference } from '../../../operator/api/index.ts';
import { parseSessionReference, type Parsed } from '../../../operator/api/parse.ts';
import type { ReconciliationOutcome } from '../../../operator/api/reconciliation-outcome.ts';
import type { ReconcilerContext } from '../../../operator/controller/context.ts';
import { WalkLane } from '../../../operator/controller/walk-lane/lane.ts';
import { decisionOf, sandboxStatus } from '../../../operator/controller/status.ts';
import { Misconfigurations } from '../../../operator/controller/misconfiguration.ts';
import type { ControllerPorts, LegacyWalk } from '../../../operator/controller/ports.ts';
import type { StoreReader } from '../../../operator/controller/cache/store.ts';
import { buildReferenceIndex, type ReferenceEntry } from '../../../operator/exclusivity/index.ts';
import { reconcileDeletion } from '../../../operator/controller/deletion/turn.ts';
import type { Action } from '../../../operator/runtime/action.ts';
import { pod, sessionReference, type SandboxBuilder } from '../builders.ts';

/** One expected call: `port.method(target)`, and what it answers (or throws). */
export type Expected = { readonly call: string; readonly reply?: unknown; readonly throws?: Error };

export const expect_ = (call: string, reply?: unknown): Expected => ({ call, reply });
export const failing = (call: string, error: Error): Expected => ({ call, throws: error });

export class ScriptError extends Error {
  override name = 'ScriptError';
}

export class Script {
  private next = 0;
  /** Every call made, in order, as `port.method(target)`. */
  readonly calls: string[] = [];

  constructor(private readonly expected: readonly Expected[]) {}

  /** The first call that differed: a read the turn started ahead and never took fails nothing by itself. */
  private mismatch: ScriptError | undefined;

  answer(call: string): unknown {
    this.calls.push(call);
    const step = this.expected[this.next];
    if (step === undefined) throw this.differs(`expected no more calls, got ${call}`);
    if (step.call !== call) throw this.differs(`expected ${step.call}, got ${call}`);
    this.next += 1;
    if (step.throws) throw step.throws;
    return step.reply;
  }

  private differs(message: string): ScriptError {
    const error = new ScriptError(message);
    this.mismatch ??= error;
    return error;
  }

  /** Fails when a call differed (even one whose failure the turn never saw) or expected calls never came. */
  finish(): void {
    if (this.mismatch) throw this.mismatch;
    const missing = this.expected.slice(this.next).map((step) => step.call);
    if (missing.length > 0) throw new ScriptError(`expected ${missing.join(', ')}, got nothing more`);
  }
}

export function scriptedPorts(script: Script): ControllerPorts {
  const reply = <T>(call: string) => Promise.resolve().then(() => script.answer(call) as T);
  return {
    sandboxes: {
      readLive: (_ns, name) => reply(`sandboxes.readLive(${name})`),
      patchStatus: (target) => reply(`sandboxes.patchStatus(${target.name})`),
      patchMetadata: (target) => reply(`sandboxes.patchMetadata(${target.name})`),
      delete: (_ns, name) => reply(`sandboxes.delete(${name})`),
    },
    references: {
      listLive: (_ns, sandbox) => reply(`references.listLive(${sandbox})`),
      pruneTombstones: (_ns, sandbox, worktree) =>
        reply(`references.pruneTombstones(${sandbox}, ${worktree})`),
      // With the LIST the turn already made: `references.deleteAll(sbx, listed [a, b])`.
      deleteAll: (_ns, sandbox, listed) =>
        reply(
          `references.deleteAll(${sandbox}${listed ? `, listed [${listed.map((r) => r.name).join(', ')}]` : ''})`,
        ),
      noticeDisruption: (_ns, sandbox, wanted) =>
        reply(`references.noticeDisruption(${sandbox}, ${wanted.kind})`),
    },
    pods: {
      create: (pod) => reply(`pods.create(${pod.metadata?.name ?? '?'})`),
      listLive: (_ns, sandbox) => reply(`pods.listLive(${sandbox})`),
      // A delete preconditioned on a version too (a suspension's) names both preconditions.
      delete: (_ns, name, uid, version) =>
        reply(version === undefined ? `pods.delete(${name})` : `pods.delete(${name}, ${uid}@${version})`),
      patchMetadata: (_ns, name) => reply(`pods.patchMetadata(${name})`),
    },
    claims: {
      read: (_ns, name) => reply(`claims.read(${name})`),
      create: (claim) => reply(`claims.create(${claim.metadata?.name ?? '?'})`),
      listLive: (_ns, sandbox) => reply(`claims.listLive(${sandbox})`),
      delete: (_ns, name) => reply(`claims.delete(${name})`),
      patchMetadata: (_ns, name) => reply(`claims.patchMetadata(${name})`),
    },
    guards: {
      ensureDisruptionBudget: (sandbox) => reply(`guards.ensureDisruptionBudget(${sandbox.metadata.name})`),
      removeDisruptionBudget: (_ns, name) => reply(`guards.removeDisruptionBudget(${name})`),
    },
    namespaces: { isTerminating: (namespace) => reply(`namespaces.isTerminating(${namespace})`) },
    events: {
      // Not awaited by the turn (ports.ts): a call that differed is still reported, by `finish()`.
      record: (_target, _type, reason) => void reply(`events.record(${reason})`).catch(() => undefined),
    },
  };
}

/** What a listed, preconditioned delete answers: these names gone, none changed since the LIST. */
export const deleted = (...names: string[]) => ({ deleted: names, changed: [] as string[] });

/**
 * The consistent LIST a scripted `references.listLive` answers with: each entry as the API server would hold
 * it (the shared builder), parsed as the reference adapter parses it.
 */
export function listed(entries: readonly ReferenceEntry[], sandbox: string): Parsed<SessionReference>[] {
  return entries.map((entry) =>
    parseSessionReference(
      sessionReference(entry.name)
        .of(sandbox)
        .forSession(entry.session)
        .fromWorktree(entry.worktree)
        .as(entry.role)
        .inState(entry.state)
        .raw(),
    ),
  );
}

export const NOW = new Date('2026-11-30T12:00:00Z');
export const silent = pino({ level: 'silent' });

/**
 * The status a releasing turn wrote for a sandbox of worktree wt-1 holding `references`: the Exclusive
 * decision, with the pod it was about to release. A later turn deciding the same writes nothing more.
 */
export function releasingStatus(subject: SandboxBuilder, references: readonly ReferenceEntry[]) {
  const exclusive = {
    verdict: 'Exclusive',
    evidence: 'Index',
    reason: 'no reference foreign to worktree wt-1',
  } as const;
  return sandboxStatus({
    sandbox: subject.build(),
    index: buildReferenceIndex(references, INDEX_LIMITS),
    pods: [pod('sbx', 0)],
    reconciliation: { state: 'NotRequired', marker: true },
    decision: decisionOf(exclusive, NOW),
    unreferencedSince: undefined,
    erasedFor: undefined,
    now: NOW,
  });
}

/**
 * A reconcile context over scripted ports and a fixed store and clock. With `ledger`, the legacy walk is
 * configured, in its lane of two: by default one more scripted call, `legacy.walk(<sandbox>)`, answering a
 * ReconciliationOutcome; or the walk given. `onWalked` hears the lane enqueue a sandbox whose walk finished.
 */
export function contextOf(
  store: StoreReader,
  script: Script,
  options: {
    ledger?: boolean | LegacyWalk;
    onWalked?: (key: string) => void;
    misconfigurations?: Misconfigurations;
    /** Sandbox keys whose claims hold our finalizer (the claim watch, cache/held-claims.ts). */
    heldClaims?: readonly string[];
  } = {},
): ReconcilerContext {
  const scripted: LegacyWalk = {
    run: (sandbox) =>
      Promise.resolve().then(
        () => script.answer(`legacy.walk(${sandbox.metadata.name})`) as ReconciliationOutcome,
      ),
  };
  const walk = options.ledger === true ? scripted : options.ledger === false ? undefined : options.ledger;
  return {
    store,
    ports: scriptedPorts(script),
    legacy:
      walk && new WalkLane(walk, { lanes: 2, now: () => NOW, enqueue: (key) => options.onWalked?.(key) }),
    sidecar: { image: 'operator:1', serviceAccountName: 'sandbox-operator' },
    limits: INDEX_LIMITS,
    now: () => NOW,
    timing: {
      resyncMs: 600_000,
      blockedRecheckMs: 30_000,
      legacyRetryMs: 60_000,
      legacyRetryWhileDeletingMs: 10_000,
      lateEraseRetryMs: [0, 0],
    },
    recorder: {},
    misconfigurations: options.misconfigurations ?? new Misconfigurations(),
    failpoint: () => undefined,
    ...(options.heldClaims
      ? { claims: { holds: (key: string) => options.heldClaims?.includes(key) === true } }
      : {}),
  };
}

/**
 * The calls of a turn that releases `subject` (worktree wt-1, holding `references`, its pods and its guard
 * cached): the incarnation GET with the confirming LIST, the decision's status write and its Event, then each
 * cached pod deleted and freed of the finalizer, then the guard, which has nothing left to hold.
 */
export function releasingTurn(subject: SandboxBuilder, references: readonly ReferenceEntry[]): Expected[] {
  return [
    expect_('sandboxes.readLive(sbx)', {
      uid: 'uid-sbx',
      deleting: true,
      finalizers: [EXCLUSIVITY_FINALIZER],
    }),
    expect_('references.listLive(sbx)', listed(references, 'sbx')),
    expect_('sandboxes.patchStatus(sbx)'),
    expect_('events.record(Releasing)'),
    ...subject
      .livePods()
      .flatMap((pod) => [expect_(`pods.delete(${pod.name})`), expect_(`pods.patchMetadata(${pod.name})`)]),
    expect_('guards.removeDisruptionBudget(sbx-sandbox)'),
  ];
}

/** One deletion turn of `subject` against a script of the API calls it must make, in order. */
export async function deletionTurn(
  subject: SandboxBuilder,
  expected: ConstructorParameters<typeof Script>[0],
): Promise<Action> {
  const script = new Script(expected);
  const action = await reconcileDeletion(contextOf(subject.store(), script), subject.build(), silent);
  script.finish();
  return action;
}

/**
 * Holds every port call until `open()` (but the first `through` calls, answered at once); `inFlight` names the
 * calls made, answered or not.
 */
export function held(ctx: ReconcilerContext, through = 0) {
  const inFlight: string[] = [];
  let open = (): void => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const hold = <T extends object>(port: string, methods: T): T =>
    Object.fromEntries(
      Object.entries(methods).map(([method, call]) => [
        method,
        async (...args: unknown[]) => {
          inFlight.push(`${port}.${method}`);
          if (inFlight.length > through) await gate;
          return (call as (...a: unknown[]) => Promise<unknown>)(...args);
        },
      ]),
    ) as T;
  const ports = Object.fromEntries(
    Object.entries(ctx.ports).map(([port, methods]) => [port, hold(port, methods as object)]),
  ) as unknown as ControllerPorts;
  return { ctx: { ...ctx, ports }, inFlight, open: () => open() };
}

/** What the turn has in flight once nothing more happens without an answer. */
export const settle = () => new Promise((resolve) => setImmediate(resolve));

/** The context with its Sandbox status writes' `readVersion` recorded: whether each lands only on the version read. */
export function recordingStatusVersions(base: ReconcilerContext): {
  readonly ctx: ReconcilerContext;
  readonly versions: (string | undefined)[];
} {
  const versions: (string | undefined)[] = [];
  const sandboxes = {
    ...base.ports.sandboxes,
    patchStatus: (...args: Parameters<typeof base.ports.sandboxes.patchStatus>) => {
      versions.push(args[3]);
      return base.ports.sandboxes.patchStatus(...args);
    },
  };
  return { ctx: { ...base, ports: { ...base.ports, sandboxes } }, versions };
}
