/**
 * The controller's I/O, as small role interfaces: Kubernetes (implemented in adapters/, on operator/kube's
 * plain-JSON client) and the legacy walks' lane (walk-lane/lane.ts). Every destructive call here is made only
 * after fresh state from the API server justified it.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Sandbox, SandboxState, SessionReference } from '../api/objects.ts';
import type { Parsed } from '../api/parse.ts';
import type { ReconciliationOutcome } from '../api/reconciliation-outcome.ts';
import type { JsonPatchOp } from './finalizer.ts';
import type { PodSummary } from './cache/pod-summary.ts';
import type { ClaimHolder } from './claims.ts';
import type { WantedNotice } from './disruption-notice.ts';
import type { ApiServerEndpoint, DesiredNetworkPolicy, SandboxIdentity } from '../api/network-policy.ts';

export type ObjectRef = {
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string | undefined;
};

/** The resourceVersion a write produced: the precondition of a write that must follow it. */
export type WrittenVersion = { readonly resourceVersion: string };

/**
 * A metadata write's answer: its resourceVersion, and the Sandbox as the API server holds it after the write
 * (the PATCH's response), so a turn can go on from it instead of waiting for the write's watch event. Parsed
 * only when asked: most writes (a finalizer's removal, the cleanup fence) never read it.
 */
export type WrittenSandbox = WrittenVersion & { readonly sandbox?: (() => Parsed<Sandbox>) | undefined };

/**
 * One incarnation of a Sandbox: its name and the uid the API server gave it. A name outlives its incarnations
 * (GitOps re-creates a released Sandbox at once), so every write to a Sandbox is bound to the uid it was
 * computed for and fails (422) on any other.
 */
export type SandboxIncarnation = { readonly namespace: string; readonly name: string; readonly uid: string };

/**
 * What a live read says of a Sandbox: the incarnation under the name now, whether it is being deleted, and its
 * pod template when the object parses (the cache keeps none: objects.ts, `SandboxState`).
 */
export type LiveSandbox = {
  readonly uid: string;
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
  readonly podTemplate?: Sandbox['spec']['podTemplate'];
  /** Its spec.worktree, when it parses (the reference review: which references are its own). */
  readonly worktree?: string;
  /** The administrator's erase-references value it carries, if any (only administrators may set it). */
  readonly eraseRequest?: string;
  /** The sandbox claim it is bound to (its sandbox-claim label, only the operator sets it), if any. */
  readonly claim?: string;
  /** The erase request its status records as acted on (status.capacity.erasedFor), if any. */
  readonly erasedFor?: string;
  /** Whether the operator has written its status (lifecycle.statusWritten): an erase pends only then. */
  readonly statusWritten: boolean;
};

export interface SandboxApi {
  /** The Sandbox under the name now, by a live GET; undefined when none is there. */
  readLive(namespace: string, name: string): Promise<LiveSandbox | undefined>;
  /**
   * Sets the changed top-level status fields (JSON Patch on the status subresource, testing the uid); `before`
   * is the status the change was computed from. With `readVersion`, it also tests the resourceVersion: the
   * write lands only on the very Sandbox it was computed from (a decision), and fails as stale otherwise.
   */
  patchStatus(
    target: SandboxIncarnation,
    before: Readonly<Record<string, unknown>> | undefined,
    changed: Readonly<Record<string, unknown>>,
    readVersion?: string,
  ): Promise<void>;
  /** JSON Patch on the object (finalizers, the cleanup fence), testing the uid; fails on a stale `test`. */
  patchMetadata(target: SandboxIncarnation, ops: readonly JsonPatchOp[]): Promise<WrittenSandbox>;
  /** Deletes the Sandbox (automatic cleanup), preconditioned on the uid and version it was decided on. */
  delete(
    namespace: string,
    name: string,
    preconditions: WrittenVersion & { readonly uid: string },
  ): Promise<void>;
}

export interface ReferenceApi {
  /**
   * Every SessionReference naming the sandbox, by a consistent LIST (no resourceVersion: served from etcd's
   * current state, never from a cache).
   */
  listLive(namespace: string, sandbox: string): Promise<Parsed<SessionReference>[]>;
  /**
   * The worktree prune: deletes the sandbox's Detached references of `worktree`, each from a consistent LIST
   * and preconditioned on the uid and resourceVersion listed, so a reference re-attached meanwhile is kept.
   */
  pruneTombstones(namespace: string, sandbox: string, worktree: string): Promise<Deleted>;
  /**
   * Erases the sandbox's index: every reference naming it, each from a consistent LIST and preconditioned on
   * the uid and resourceVersion listed. `listed` is a consistent LIST this turn already made after the fence
   * (the one the decision read): it is used instead of listing again.
   */
  deleteAll(namespace: string, sandbox: string, listed?: readonly ListedReference[]): Promise<Deleted>;
  /**
   * Puts the drain notice the sandbox's references should carry (disruption-notice.ts) on each that does not:
   * from a consistent LIST, each `status.disruption` written (or removed) on the resourceVersion listed, so a
   * reference changed meanwhile is reported, not overwritten; gone is fine.
   */
  noticeDisruption(namespace: string, sandbox: string, wanted: WantedNotice): Promise<Noticed>;
}

/** What a notice write did: the references it wrote, and those changed since the LIST (the next turn's). */
export type Noticed = { readonly written: readonly string[]; readonly changed: readonly string[] };

/** A reference as a consistent LIST returned it: what a preconditioned delete of it needs. */
export type ListedReference = {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
};

/** What a listed, preconditioned delete did: gone (deleted now or before), or kept because it changed. */
export type Deleted = { readonly deleted: readonly string[]; readonly changed: readonly string[] };

/** The pod that holds a name the operator's create needed (read after the 409), as live/pod-name.ts judges it. */
export type PodNameHolder = {
  readonly uid: string;
  /** Its `sandbox.agents.dev/sandbox` label, if any. */
  readonly sandboxLabel: string | undefined;
  /** Its controller owner reference, if any. */
  readonly controller: { readonly kind: string; readonly name: string; readonly uid: string } | undefined;
  readonly deleting: boolean;
};

export interface PodApi {
  /**
   * Creates the pod; when a pod of that name is already there, which one (read right after; `Created` too
   * when it is gone by then, for the next turn to see).
   */
  create(pod: V1Pod): Promise<'Created' | { readonly taken: PodNameHolder }>;
  /** The sandbox's pods, by a consistent LIST. */
  listLive(namespace: string, sandbox: string): Promise<PodSummary[]>;
  /**
   * Deletes the pod, preconditioned on its uid, and on its resourceVersion when given (a suspension deletes
   * only the pod as it read it); already gone is fine.
   */
  delete(namespace: string, name: string, uid: string, resourceVersion?: string): Promise<void>;
  patchMetadata(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<void>;
}

/** The persistent workspace's claims (claims.ts); every write is bound to the uid or version read. */
export interface ClaimApi {
  /** The claim under the name now, by a live GET; undefined when none is there. */
  read(namespace: string, name: string): Promise<ClaimHolder | undefined>;
  /** Creates the claim; when one of that name is already there, which one (read right after). */
  create(claim: V1PersistentVolumeClaim): Promise<'Created' | { readonly taken: ClaimHolder }>;
  /** The sandbox's claims (by its label), by a consistent LIST. */
  listLive(namespace: string, sandbox: string): Promise<ClaimHolder[]>;
  /** Deletes the claim, preconditioned on its uid; already gone is fine. */
  delete(namespace: string, name: string, uid: string): Promise<void>;
  /** JSON Patch on its metadata (each patch tests the version read); already gone is fine. */
  patchMetadata(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<void>;
}

export interface GuardApi {
  /**
   * Ensures the PodDisruptionBudget (maxUnavailable 0) that makes evictions of the sandbox's pods fail:
   * creates it, or puts back a changed one (preconditioned on the version it read).
   */
  ensureDisruptionBudget(sandbox: SandboxState): Promise<'Created' | 'Repaired' | 'Unchanged'>;
  /** Deletes the budget once the pods are released, preconditioned on its uid; already gone is fine. */
  removeDisruptionBudget(namespace: string, name: string, uid: string): Promise<void>;
}

export interface NamespaceApi {
  /** Whether the namespace is being deleted (a live read; gone counts as terminating). */
  isTerminating(namespace: string): Promise<boolean>;
}

/** The NetworkPolicy of a Managed sandbox (network-isolation.ts), and what its rules read. */
export interface NetworkPolicyApi {
  /** Whether an administrator labelled the namespace `sandbox.agents.dev/network-unmanaged=allowed` (live read). */
  unmanagedAllowed(namespace: string): Promise<boolean>;
  /**
   * The `kubernetes` Service's endpoints, from its EndpointSlice in `default`: as its watch has them once
   * synced, else read live (kept for a minute once found).
   */
  apiServerEndpoints(): Promise<readonly ApiServerEndpoint[]>;
  /**
   * Creates the policy, or puts back a changed one (a PUT preconditioned on the version it read or cached);
   * compared with the watch's cache once synced, else read live.
   */
  ensure(policy: DesiredNetworkPolicy): Promise<'Created' | 'Repaired' | 'Unchanged'>;
  /**
   * Deletes the sandbox's policy if it is the operator's for this incarnation (by its labels: it has no owner),
   * preconditioned on the uid and version its cache holds, or read live before the cache has listed or when it
   * was stale. Bound to the incarnation so, it needs no read of the Sandbox.
   */
  removeOwned(sandbox: SandboxIdentity): Promise<'Removed' | 'Absent' | 'NotOurs'>;
  /**
   * Whether a policy of the sandbox may stand: its cache holds one, or has not listed yet (fail closed: the
   * release then removes it, reading it live).
   */
  mayStand(sandbox: Omit<SandboxIdentity, 'uid'>): boolean;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  /**
   * Best effort and asynchronous, as client-go's recorder: the turn never waits for an Event (it was one
   * request in series in every releasing turn), and a failure is logged by the implementation, never thrown.
   */
  record(target: ObjectRef, type: EventType, reason: string, message: string): void;
}

export type ControllerPorts = {
  readonly sandboxes: SandboxApi;
  readonly references: ReferenceApi;
  readonly pods: PodApi;
  readonly claims: ClaimApi;
  readonly guards: GuardApi;
  readonly namespaces: NamespaceApi;
  readonly events: EventRecorder;
  /**
   * Absent only in the fakes of tests about other rules, which predate it; the operator's wiring always
   * sets it (wiring/manager.ts), and its turns then create no pod before the policy stands.
   */
  readonly networkPolicies?: NetworkPolicyApi;
};

// The legacy walks' lane (walk-lane/lane.ts implements it; docs/adr/0005-legacy-walk-lane.md).

/** Runs the bounded legacy walk for one sandbox against the configured ledger and locator. */
export interface LegacyWalk {
  run(sandbox: SandboxState, log: Logger): Promise<ReconciliationOutcome>;
}

/** A finished walk of one incarnation, not yet seen persisted. */
export type FinishedWalk = { readonly outcome: ReconciliationOutcome; readonly finishedAt: Date };

export type WalkState =
  | { readonly kind: 'none' }
  /** Started: waiting for a lane, or walking. */
  | { readonly kind: 'under-way' }
  | ({ readonly kind: 'finished' } & FinishedWalk);

/** The port the reconcile sees: the walk's state, its start, and forgetting what is persisted or gone. */
export interface LegacyWalks {
  state(sandbox: SandboxState): WalkState;
  /** Starts a walk unless one of this incarnation is under way; `onKept` runs once its outcome is kept. */
  start(sandbox: SandboxState, log: Logger, onKept?: () => void): void;
  /** The status now carries the kept outcome (or a newer one): it is no longer needed. */
  settle(sandbox: SandboxState): void;
  /** The sandbox left the cache: whatever is kept or queued for it goes. */
  forget(key: string): void;
}
