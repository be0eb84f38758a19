/**
 * The platform's side of the reference index, as functions platforms call instead of writing objects by hand.
 *
 * attach: write the reference, then read the Sandbox live; if it is being deleted, fenced by automatic cleanup,
 * gone, or unreadable, withdraw what this call wrote and fail with SandboxDeletingError. Together with the
 * controller, which LISTs references only after the deletion's own write, either the controller sees the
 * reference or the attach sees the deletion (docs/adr/0003-attach-handshake.md).
 * detach: mark the reference Detached (a tombstone that still blocks destruction).
 * forget: delete the reference, best effort, within a deadline; never throws (the session's deletion goes on).
 * pruneWorktree: delete the tombstones of a worktree.
 *
 * The decisions are pure (fence.ts judges the Sandbox, withdrawal.ts plans the undo); this file does the I/O.
 */
import { PatchStrategy, type KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, SESSION_REFERENCE } from '../api/names.ts';
import type { SessionReferenceSpec } from '../api/session-reference.ts';
import { KubeRequestError, request, requestUnlessGone } from '../kube/errors.ts';
import { jsonClientFor } from '../kube/clients.ts';
import { CLIENT_USER_AGENT, type ClientOptions } from './options.ts';
import type { JsonClient } from '../kube/plain-json.ts';
import { judgeFence, type FenceJudgement, type SandboxRead } from './fence.ts';
import { sessionReferenceName } from './names.ts';
import { referencePath, referencesPath, sandboxPath } from './paths.ts';
import { planWithdrawal, type AttachWrite, type Withdrawal } from './withdrawal.ts';
import { judgeReattach } from './reattach.ts';
import { SessionReferenceConflictError } from './conflict-error.ts';
import { resumeIfSuspended, waitUntilReady, type AttachOptions } from './resumption.ts';
import { readDisruption, type DisruptionNotice } from './disruption.ts';

export type { Withdrawal } from './withdrawal.ts';

/** Why the fence refused: the deletion's own fence, cleanup's, the Sandbox gone, or unreadable. */
export type FenceReason = 'Deleting' | 'CleanupFenced' | 'Gone' | 'Unreadable';

export class SandboxDeletingError extends Error {
  readonly kind = 'SandboxDeleting';
  constructor(
    readonly namespace: string,
    readonly sandbox: string,
    /** When the fence went up; undefined when the Sandbox is gone or could not be read. */
    readonly since: string | undefined,
    readonly withdrawal: Withdrawal,
    readonly reason: FenceReason = since === undefined ? 'Gone' : 'Deleting',
    /** For `Unreadable`: what could not be read. */
    readonly problem?: string,
  ) {
    super(describe(`sandbox ${namespace}/${sandbox}`, since, reason, problem, withdrawal));
    this.name = 'SandboxDeletingError';
  }
}

function describe(
  what: string,
  since: string | undefined,
  reason: FenceReason,
  problem: string | undefined,
  withdrawal: Withdrawal,
): string {
  switch (reason) {
    case 'Gone':
      return `${what} does not exist; the attach was withdrawn (${withdrawal})`;
    case 'Unreadable':
      return `${what} could not be read (${problem ?? 'unreadable'}), so it is treated as being deleted; the attach was refused and withdrawn (${withdrawal})`;
    case 'Deleting':
    case 'CleanupFenced':
      return `${what} is being deleted (since ${since ?? '?'}); the attach was refused and withdrawn (${withdrawal})`;
  }
}

export type AttachRequest = Omit<SessionReferenceSpec, 'state'> & { readonly namespace: string };
export type ForgetResult =
  { readonly kind: 'Forgotten' | 'AlreadyGone' } | { readonly kind: 'Failed'; readonly error: unknown };

type StoredReference = {
  readonly metadata?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly spec?: { readonly state?: unknown; readonly route?: unknown };
};

/** A re-attach that keeps losing the race to other writers gives up after this many reads. */
const REATTACH_ATTEMPTS = 5;

const target = (namespace: string, name: string) => `sessionreference ${namespace}/${name}`;
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

export class SessionReferences {
  private readonly json: JsonClient;
  constructor(config: KubeConfig, options: ClientOptions = {}) {
    this.json = jsonClientFor(config, { userAgent: options.userAgent ?? CLIENT_USER_AGENT });
  }

  /**
   * Records the attach; returns the reference's name. Throws SandboxDeletingError when the fence is up, after
   * withdrawing only what this call wrote (withdrawal.ts); SessionReferenceConflictError, writing nothing,
   * when the name holds a reference with other fixed fields (reattach.ts). A sandbox suspended by its spec is
   * resumed (resume.ts; SandboxResumeForbiddenError when this identity may not), and with `waitReady` the call
   * returns once it is Ready (SandboxNotReadyError at the deadline); the reference stays Attached either way.
   */
  async attach(req: AttachRequest, options: AttachOptions = {}): Promise<string> {
    const { namespace, ...spec } = req;
    const name = sessionReferenceName(spec.sandbox, spec.session);
    const written = await this.writeAttached(namespace, name, spec);
    // The fence check reads the Sandbox live, after the reference is written.
    const read = await this.readSandbox(namespace, spec.sandbox);
    const fence = judgeFence(read);
    if (fence.kind === 'Open') {
      if (options.resume !== false && read.kind === 'Json')
        await resumeIfSuspended(this.json, namespace, spec.sandbox, read.body);
      if (options.waitReady) await waitUntilReady(this.json, namespace, spec.sandbox, options.waitReady);
      return name;
    }
    const withdrawal = await this.withdraw(namespace, name, written, spec.route);
    throw refusal(namespace, spec.sandbox, fence, withdrawal);
  }

  private async readSandbox(namespace: string, sandbox: string): Promise<SandboxRead> {
    try {
      const body = await requestUnlessGone('Get', `sandbox ${namespace}/${sandbox}`, () =>
        this.json({ method: 'GET', path: sandboxPath(namespace, sandbox) }),
      );
      return body === undefined ? { kind: 'Gone' } : { kind: 'Json', body };
    } catch (error) {
      // A success whose body is not JSON: the fence cannot be read, which the judgement treats as deleting.
      if (error instanceof KubeRequestError && error.cause instanceof SyntaxError) return { kind: 'NotJson' };
      throw error;
    }
  }

  private async writeAttached(
    namespace: string,
    name: string,
    spec: Omit<AttachRequest, 'namespace'>,
  ): Promise<AttachWrite> {
    const body = {
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: { name, namespace },
      spec: { ...spec, state: 'Attached' },
    };
    try {
      const created = (await request('Create', target(namespace, name), () =>
        this.json({ method: 'POST', path: referencesPath(namespace), body }),
      )) as StoredReference;
      return {
        kind: 'Created',
        uid: created.metadata?.uid ?? '',
        resourceVersion: created.metadata?.resourceVersion ?? '',
      };
    } catch (error) {
      if (!(error instanceof KubeRequestError && error.status === 409)) throw error;
    }
    // Re-attach: the reference (perhaps a tombstone) exists. Only this session's own is re-attached (a squat
    // is refused, reattach.ts). Remember what it was, then make it Attached with the new route,
    // preconditioned on the version just read so the remembered state is the one replaced.
    for (let attempt = 1; ; attempt += 1) {
      const current = (await request('Get', target(namespace, name), () =>
        this.json({ method: 'GET', path: referencePath(namespace, name) }),
      )) as StoredReference;
      const judgement = judgeReattach(spec, current);
      if (judgement.kind === 'Differs') throw new SessionReferenceConflictError(namespace, name, judgement);
      try {
        const patched = (await request('Patch', target(namespace, name), () =>
          this.json({
            method: 'PATCH',
            path: referencePath(namespace, name),
            body: {
              metadata: { resourceVersion: current.metadata?.resourceVersion },
              spec: { state: 'Attached', route: spec.route },
            },
            contentType: PatchStrategy.MergePatch,
          }),
        )) as StoredReference;
        const state = text(current.spec?.state);
        const route = text(current.spec?.route);
        return {
          kind: 'Reattached',
          before: { ...(state === undefined ? {} : { state }), ...(route === undefined ? {} : { route }) },
          resourceVersion: patched.metadata?.resourceVersion ?? '',
        };
      } catch (error) {
        if (!(error instanceof KubeRequestError && error.status === 409) || attempt >= REATTACH_ATTEMPTS)
          throw error;
      }
    }
  }

  private async withdraw(
    namespace: string,
    name: string,
    written: AttachWrite,
    route: string,
  ): Promise<Withdrawal> {
    const plan = planWithdrawal(written, route);
    try {
      switch (plan.kind) {
        case 'Nothing':
          return 'Unchanged';
        case 'Delete':
          await requestUnlessGone('Delete', target(namespace, name), () =>
            this.json({
              method: 'DELETE',
              path: referencePath(namespace, name),
              body: { preconditions: plan.preconditions },
            }),
          );
          return 'Deleted';
        case 'Restore':
          await request('Patch', target(namespace, name), () =>
            this.json({
              method: 'PATCH',
              path: referencePath(namespace, name),
              body: plan.patch,
              contentType: PatchStrategy.MergePatch,
            }),
          );
          return 'Restored';
      }
    } catch (error) {
      // A conflict means another writer changed the reference since this attach wrote it: what they wrote
      // stands. Leaving a reference in place can only block a destruction, never cause one.
      if (error instanceof KubeRequestError && error.status === 409) return 'LeftChanged';
      throw error;
    }
  }

  /** Marks the reference Detached: a tombstone that keeps blocking destruction until pruned or forgotten. */
  async detach(namespace: string, sandbox: string, session: string): Promise<void> {
    const name = sessionReferenceName(sandbox, session);
    await request('Patch', target(namespace, name), () =>
      this.json({
        method: 'PATCH',
        path: referencePath(namespace, name),
        body: { spec: { state: 'Detached' } },
        contentType: PatchStrategy.MergePatch,
      }),
    );
    await request('PatchStatus', target(namespace, name), () =>
      this.json({
        method: 'PATCH',
        path: `${referencePath(namespace, name)}/status`,
        body: { status: { detachedAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') } },
        contentType: PatchStrategy.MergePatch,
      }),
    );
  }

  /**
   * The drain notice on the session's reference (`status.disruption`): a drain is moving the sandbox's pods to
   * another node, at the latest at `movesBy`; undefined when none is (or the reference is gone).
   */
  async disruption(
    namespace: string,
    sandbox: string,
    session: string,
  ): Promise<DisruptionNotice | undefined> {
    const name = sessionReferenceName(sandbox, session);
    const stored = await requestUnlessGone('Get', target(namespace, name), () =>
      this.json({ method: 'GET', path: referencePath(namespace, name) }),
    );
    return readDisruption(stored);
  }

  /** Deletes the reference within `deadlineMs`; the outcome is a value, never an exception. */
  async forget(
    namespace: string,
    sandbox: string,
    session: string,
    deadlineMs = 2_000,
  ): Promise<ForgetResult> {
    const name = sessionReferenceName(sandbox, session);
    const deadline = new Promise<ForgetResult>((resolve) => {
      const timer = setTimeout(
        () => resolve({ kind: 'Failed', error: new Error(`forget did not finish within ${deadlineMs} ms`) }),
        deadlineMs,
      );
      timer.unref();
    });
    const work = requestUnlessGone('Delete', target(namespace, name), () =>
      this.json({ method: 'DELETE', path: referencePath(namespace, name) }),
    ).then(
      (result): ForgetResult => ({ kind: result === undefined ? 'AlreadyGone' : 'Forgotten' }),
      (error: unknown): ForgetResult => ({ kind: 'Failed', error }),
    );
    return Promise.race([work, deadline]);
  }

  /**
   * Deletes the detached references of `worktree`; returns the names it deleted. Each delete is
   * preconditioned on the version the list showed, so a reference re-attached in between is kept.
   */
  async pruneWorktree(namespace: string, worktree: string): Promise<string[]> {
    const list = (await request('List', `sessionreferences of worktree ${worktree}`, () =>
      this.json({
        method: 'GET',
        path: referencesPath(namespace),
        query: { fieldSelector: `spec.worktree=${worktree},spec.state=Detached` },
      }),
    )) as { items: { metadata: { name: string; uid?: string; resourceVersion?: string } }[] };
    const pruned: string[] = [];
    for (const { metadata } of list.items) {
      const { name, uid, resourceVersion } = metadata;
      try {
        const deleted: unknown = await requestUnlessGone('Delete', target(namespace, name), () =>
          this.json({
            method: 'DELETE',
            path: referencePath(namespace, name),
            body: { preconditions: { uid: uid ?? '', resourceVersion: resourceVersion ?? '' } },
          }),
        );
        if (deleted !== undefined) pruned.push(name);
      } catch (error) {
        // Changed since the list (re-attached, or replaced): no longer the tombstone this prune was asked for.
        if (!(error instanceof KubeRequestError && error.status === 409)) throw error;
      }
    }
    return pruned;
  }
}

function refusal(
  namespace: string,
  sandbox: string,
  fence: Exclude<FenceJudgement, { kind: 'Open' }>,
  withdrawal: Withdrawal,
): SandboxDeletingError {
  switch (fence.kind) {
    case 'Gone':
      return new SandboxDeletingError(namespace, sandbox, undefined, withdrawal, 'Gone');
    case 'Unreadable':
      return new SandboxDeletingError(namespace, sandbox, undefined, withdrawal, 'Unreadable', fence.problem);
    case 'Deleting':
    case 'CleanupFenced':
      return new SandboxDeletingError(namespace, sandbox, fence.since, withdrawal, fence.kind);
  }
}
