/**
 * The soak's model of one sequence: the sandboxes it made, the references the agent hosts hold (as the
 * product promises them: a refused re-attach restores what was there, a prune removes only tombstones), and
 * every operation with its time window and user agent, so the audit log's events can be attributed to them.
 * Pure data and pure updates; the actors in commands.ts do the I/O and report outcomes here.
 */
import type { ReferenceState, Role } from '../../operator/api/session-reference.ts';

export type Worktree = string | undefined;

export type SessionSpec = {
  readonly id: string;
  readonly worktree: Worktree;
  readonly role: Role;
};

export type SandboxSpec = {
  readonly name: string;
  readonly worktree: Worktree;
  readonly replicas: number;
  /** Created with sandbox.agents.dev/adopted-from and no ledger: unknown history, forever. */
  readonly adopted: boolean;
  /** Whether the GitOps manifest carries the adoption annotation (a replace from it keeps it). */
  readonly manifestKeepsAdoption: boolean;
  /** spec.cleanup DeleteWhenUnreferenced with this TTL, or Retain. */
  readonly cleanupTtlSeconds: number | undefined;
  /**
   * The Git manifest carries an erase-references annotation (a GitOps tool keeps what an administrator once
   * set): inherited by every incarnation it creates, never a request; set back by a replace or an apply
   * after an administrator's request changed it, it is a new request (a new value).
   */
  readonly manifestErase: boolean;
  /**
   * A persistent workspace: one claim `workspace-<name>` (spec.volumeClaimTemplates, retention Delete), which
   * makes suspension allowed; the others' suspensions are refused by the CRD.
   */
  readonly workspace: boolean;
  /** spec.idle.suspendAfterSeconds (only with a workspace, which the CRD requires for it), or none. */
  readonly idleSeconds: number | undefined;
  /** A sandbox the operator bound to this SandboxClaim (issue 28): learnt from the claim's status. */
  readonly claim?: string;
  /**
   * With the shell reaper (SameUser: the template pins one user): every pod the operator makes for it, on
   * every path (create, replica, resume, reschedule), must pass the operator bounds' reaper checks
   * (operator/api/reaper-bounds.ts), or the sandbox never gets its pods.
   */
  readonly shellReaper: boolean;
};

/** The sequence's warm pool (issue 28): `pool` of template `tpl`, made by an administrator at the start. */
export type PoolSpec = {
  readonly replicas: number;
  readonly updateStrategy: 'OnReplenish' | 'Recreate';
};

/** A SandboxClaim a user made, and what the operator bound it to (from its status), once seen. */
export type ModelClaim = {
  readonly name: string;
  readonly session: string;
  sandbox: string | undefined;
  reference: string | undefined;
  launchType: string | undefined;
  /** A successful DELETE of it was answered (or it was never made). */
  deleted: boolean;
};

/** When a reference certainly existed: from its writer's success, until a legitimate removal began. */
export type Presence = {
  /** The op whose success established it; the audit log's write event of that op refines `from`. */
  readonly fromOp: number;
  from: number;
  until: number;
};

export type ModelReference = {
  readonly name: string;
  readonly sandbox: string;
  readonly session: string;
  readonly worktree: Worktree;
  state: ReferenceState;
  /** An outcome the model cannot know (a failed request): excluded from the live comparison. */
  uncertain: boolean;
  readonly presence: Presence[];
};

export type OpKind =
  | 'attach'
  | 'detach'
  | 'forget'
  | 'prune'
  | 'delete-sandbox'
  | 'delete-pod'
  | 'evict-pod'
  | 'relabel-pod'
  | 'delete-pdb'
  | 'lower-replicas'
  | 'annotate'
  | 'replace'
  | 'apply'
  | 'pause'
  | 'delete-namespace'
  | 'status-write'
  | 'strip-finalizer'
  | 'platform'
  | 'late-reference'
  | 'erase'
  | 'suspend'
  | 'resume'
  | 'drain'
  | 'delete-claim'
  | 'scale-pool'
  | 'rollout'
  | 'claim'
  | 'delete-sandbox-claim'
  | 'delete-pool'
  | 'harness';

export type OpRecord = {
  readonly id: number;
  readonly kind: OpKind;
  readonly userAgent: string;
  readonly detail: string;
  readonly startedAt: number;
  endedAt: number;
  outcome: string;
  /** attach/detach/forget: the reference; prune: the worktree. */
  readonly reference?: string;
  readonly worktree?: Worktree;
  readonly sandbox?: string;
  /** drain: the node cordoned from the op's start to its end. */
  readonly node?: string;
};

export const open = (presence: Presence | undefined): boolean =>
  presence !== undefined && presence.until === Number.POSITIVE_INFINITY;

export class SoakModel {
  readonly sandboxes = new Map<string, SandboxSpec>();
  readonly references = new Map<string, ModelReference>();
  /** Issue 28: the sequence's SandboxClaims by name. */
  readonly claims = new Map<string, ModelClaim>();
  readonly ops: OpRecord[] = [];
  /** Set when the harness deletes the namespace. */
  namespaceDeleteAt: number | undefined;

  constructor(
    readonly namespace: string,
    readonly sessions: readonly SessionSpec[],
    sandboxes: readonly SandboxSpec[],
  ) {
    for (const sandbox of sandboxes) this.sandboxes.set(sandbox.name, sandbox);
  }

  begin(
    kind: OpKind,
    detail: string,
    extra: Partial<Pick<OpRecord, 'reference' | 'worktree' | 'sandbox' | 'node'>> = {},
  ) {
    const id = this.ops.length;
    const op: OpRecord = {
      id,
      kind,
      detail,
      userAgent: `soak/${this.namespace}/${id}/${kind}`,
      startedAt: Date.now(),
      endedAt: Number.NaN,
      outcome: 'running',
      ...extra,
    };
    this.ops.push(op);
    return op;
  }

  end(op: OpRecord, outcome: string): void {
    op.endedAt = Date.now();
    op.outcome = outcome;
  }

  /**
   * A claim's bound sandbox, seen in its status: an ordinary sandbox of the model from then on (no worktree, one
   * pod, Retain), so every invariant judges it as it judges the others.
   */
  bound(claim: string, sandbox: string, replicas: number): void {
    if (this.sandboxes.has(sandbox)) return;
    this.sandboxes.set(sandbox, {
      name: sandbox,
      worktree: undefined,
      replicas,
      adopted: false,
      manifestKeepsAdoption: false,
      cleanupTtlSeconds: undefined,
      manifestErase: false,
      workspace: false,
      idleSeconds: undefined,
      claim,
      shellReaper: false,
    });
  }

  session(id: string): SessionSpec {
    const session = this.sessions.find((s) => s.id === id);
    if (!session) throw new Error(`no session ${id} in the model`);
    return session;
  }

  sandbox(name: string): SandboxSpec {
    const sandbox = this.sandboxes.get(name);
    if (!sandbox) throw new Error(`no sandbox ${name} in the model`);
    return sandbox;
  }

  /** An attach (or re-attach) that returned success: the reference exists, Attached, from its write on. */
  attached(op: OpRecord, name: string, sandbox: string, session: SessionSpec): void {
    const ref = this.references.get(name) ?? {
      name,
      sandbox,
      session: session.id,
      worktree: session.worktree,
      state: 'Attached' as const,
      uncertain: false,
      presence: [],
    };
    ref.state = 'Attached';
    ref.uncertain = false;
    if (!open(ref.presence.at(-1))) ref.presence.push({ fromOp: op.id, from: op.endedAt, until: Infinity });
    this.references.set(name, ref);
  }

  detached(name: string): void {
    const ref = this.references.get(name);
    if (ref) ref.state = 'Detached';
  }

  /** A forget or prune began removing the reference: from then on it may be gone. */
  removing(op: OpRecord, name: string, certain: boolean): void {
    const ref = this.references.get(name);
    const last = ref?.presence.at(-1);
    if (!ref || !last || !open(last)) return;
    last.until = op.startedAt;
    ref.uncertain = !certain;
  }

  /** The outcome of a write to `name` is unknown (a request failed): stop comparing it with the API. */
  unknown(name: string): void {
    const ref = this.references.get(name);
    if (ref) ref.uncertain = true;
  }

  /** References that certainly exist now (open presence), of one sandbox or all. */
  present(sandbox?: string): ModelReference[] {
    return [...this.references.values()].filter(
      (ref) => (sandbox === undefined || ref.sandbox === sandbox) && open(ref.presence.at(-1)),
    );
  }

  /**
   * The reference's sandbox was deleted (successfully) since the reference was last established: the
   * release of that incarnation may have erased it, even if a same-named Sandbox exists now. The audit log,
   * not the live state, judges that erase (invariant 3).
   */
  sandboxDeletedSince(ref: ModelReference): boolean {
    const since = ref.presence.at(-1)?.from ?? Number.POSITIVE_INFINITY;
    return this.ops.some(
      (op) =>
        op.kind === 'delete-sandbox' &&
        op.sandbox === ref.sandbox &&
        op.outcome === 'ok' &&
        op.endedAt >= since,
    );
  }

  /**
   * An administrator asked for an erase of the sandbox's references (a successful annotation write): the
   * operator may then delete any of them, whenever its turn comes. The audit log judges each deletion against
   * the request's window (invariant 3); the live comparison leaves the sandbox's missing references to it.
   */
  eraseRequested(sandbox: string): boolean {
    return this.ops.some((op) => op.kind === 'erase' && op.sandbox === sandbox && op.outcome === 'ok');
  }

  tombstonesOf(worktree: Worktree): ModelReference[] {
    return this.present().filter((ref) => ref.state === 'Detached' && ref.worktree === worktree);
  }
}
