/**
 * The platform's side of the reference index, as functions platforms call instead of writing objects by hand.
 *
 * attach: write the reference, then read the Sandbox live; if it is being deleted, fenced by automatic cleanup,
 * or gone, withdraw what this call wrote and fail with SandboxDeletingError. Together with the controller, which LISTs references only
 * after the deletion's own write, either the controller sees the reference or the attach sees the deletion.
 * detach: mark the reference Detached (a tombstone that still blocks destruction).
 * forget: delete the reference, best effort, within a deadline; never throws (the session's deletion goes on).
 * pruneWorktree: delete the tombstones of a worktree.
 */
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { ANNOTATIONS, GROUP, SANDBOX, SESSION_REFERENCE, VERSION, API_VERSION } from '../api/names.ts';
import type { SessionReferenceSpec } from '../api/session-reference.ts';
import { parseSandbox } from '../api/parse.ts';
import { KubeRequestError, request, requestUnlessGone } from '../kube/errors.ts';
import { MERGE_PATCH } from '../kube/clients.ts';
import { sessionReferenceName } from './names.ts';

/** What a refused attach did with the reference it had written. */
export type Withdrawal =
  /** The attach created the reference, and deleted it again (preconditioned on what it created). */
  | 'Deleted'
  /** The reference existed; its earlier state and route were put back (preconditioned on the attach's write). */
  | 'Restored'
  /** The reference existed as it is now (already Attached, same route): nothing to undo. */
  | 'Unchanged'
  /** Someone wrote the reference after the attach did: it is left as they made it (an extra reference only blocks). */
  | 'LeftChanged';

export class SandboxDeletingError extends Error {
  readonly kind = 'SandboxDeleting';
  constructor(
    readonly namespace: string,
    readonly sandbox: string,
    readonly since: string | undefined,
    readonly withdrawal: Withdrawal,
  ) {
    super(
      since === undefined
        ? `sandbox ${namespace}/${sandbox} does not exist; the attach was withdrawn (${withdrawal})`
        : `sandbox ${namespace}/${sandbox} is being deleted (since ${since}); the attach was refused and withdrawn (${withdrawal})`,
    );
    this.name = 'SandboxDeletingError';
  }
}

export type AttachRequest = Omit<SessionReferenceSpec, 'state'> & { readonly namespace: string };
export type ForgetResult =
  { readonly kind: 'Forgotten' | 'AlreadyGone' } | { readonly kind: 'Failed'; readonly error: unknown };

type ObjectMeta = { readonly uid?: string; readonly resourceVersion?: string };
type StoredReference = {
  readonly metadata: ObjectMeta;
  readonly spec?: { readonly state?: string; readonly route?: string };
};

/** What the attach's write did, so a refused attach undoes exactly that and nothing more. */
type AttachWrite =
  | { readonly kind: 'Created'; readonly uid: string; readonly resourceVersion: string }
  | {
      readonly kind: 'Reattached';
      readonly before: { readonly state: string | undefined; readonly route: string | undefined };
      readonly resourceVersion: string;
    };

/** A re-attach that keeps losing the race to other writers gives up after this many reads. */
const REATTACH_ATTEMPTS = 5;

export class SessionReferences {
  private readonly api: CustomObjectsApi;
  constructor(config: KubeConfig) {
    this.api = config.makeApiClient(CustomObjectsApi);
  }

  private at(namespace: string, plural: string) {
    return { group: GROUP, version: VERSION, namespace, plural };
  }

  private references(namespace: string) {
    return this.at(namespace, SESSION_REFERENCE.plural);
  }

  /**
   * Records the attach; returns the reference's name. Throws SandboxDeletingError when the fence is up, after
   * withdrawing only what this call wrote: a reference it created is deleted, one that existed (a tombstone,
   * an earlier attachment) gets its earlier state back — never deleted, since it may be what blocks the
   * deletion.
   */
  async attach(req: AttachRequest): Promise<string> {
    const { namespace, ...spec } = req;
    const name = sessionReferenceName(spec.sandbox, spec.session);
    const written = await this.writeAttached(namespace, name, spec);
    // The fence check reads the Sandbox live, after the reference is written.
    const raw: unknown = await requestUnlessGone('Get', `sandbox ${namespace}/${spec.sandbox}`, () =>
      this.api.getNamespacedCustomObject({ ...this.at(namespace, SANDBOX.plural), name: spec.sandbox }),
    );
    const sandbox = raw === undefined ? undefined : parseSandbox(raw);
    const metadata = sandbox?.ok ? sandbox.value.metadata : undefined;
    // Either fence refuses the attach: the deletion's own, or automatic cleanup's (raised before its LIST).
    const deletionTimestamp =
      metadata?.deletionTimestamp ?? metadata?.annotations?.[ANNOTATIONS.cleanupFence];
    if (raw === undefined || deletionTimestamp !== undefined) {
      const withdrawal = await this.withdraw(namespace, name, written, spec.route);
      throw new SandboxDeletingError(
        namespace,
        spec.sandbox,
        deletionTimestamp === undefined ? undefined : String(deletionTimestamp),
        withdrawal,
      );
    }
    return name;
  }

  private async writeAttached(
    namespace: string,
    name: string,
    spec: Omit<AttachRequest, 'namespace'>,
  ): Promise<AttachWrite> {
    const target = `sessionreference ${namespace}/${name}`;
    const body = {
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: { name, namespace },
      spec: { ...spec, state: 'Attached' },
    };
    try {
      const created = (await request('Create', target, () =>
        this.api.createNamespacedCustomObject({ ...this.references(namespace), body }),
      )) as StoredReference;
      return {
        kind: 'Created',
        uid: created.metadata.uid ?? '',
        resourceVersion: created.metadata.resourceVersion ?? '',
      };
    } catch (error) {
      if (!(error instanceof KubeRequestError && error.status === 409)) throw error;
    }
    // Re-attach: the reference (perhaps a tombstone) exists. Remember what it was, then make it Attached with
    // the new route, preconditioned on the version just read so the remembered state is the one replaced.
    for (let attempt = 1; ; attempt += 1) {
      const current = (await request('Get', target, () =>
        this.api.getNamespacedCustomObject({ ...this.references(namespace), name }),
      )) as StoredReference;
      try {
        const patched = (await request('Patch', target, () =>
          this.api.patchNamespacedCustomObject(
            {
              ...this.references(namespace),
              name,
              body: {
                metadata: { resourceVersion: current.metadata.resourceVersion },
                spec: { state: 'Attached', route: spec.route },
              },
            },
            MERGE_PATCH,
          ),
        )) as StoredReference;
        return {
          kind: 'Reattached',
          before: { state: current.spec?.state, route: current.spec?.route },
          resourceVersion: patched.metadata.resourceVersion ?? '',
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
    const target = `sessionreference ${namespace}/${name}`;
    try {
      if (written.kind === 'Created') {
        await requestUnlessGone('Delete', target, () =>
          this.api.deleteNamespacedCustomObject({
            ...this.references(namespace),
            name,
            body: { preconditions: { uid: written.uid, resourceVersion: written.resourceVersion } },
          }),
        );
        return 'Deleted';
      }
      const { before } = written;
      if (before.state === 'Attached' && before.route === route) return 'Unchanged';
      await request('Patch', target, () =>
        this.api.patchNamespacedCustomObject(
          {
            ...this.references(namespace),
            name,
            body: {
              metadata: { resourceVersion: written.resourceVersion },
              spec: { state: before.state ?? 'Attached', route: before.route ?? route },
            },
          },
          MERGE_PATCH,
        ),
      );
      return 'Restored';
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
    await request('Patch', `sessionreference ${namespace}/${name}`, () =>
      this.api.patchNamespacedCustomObject(
        { ...this.at(namespace, SESSION_REFERENCE.plural), name, body: { spec: { state: 'Detached' } } },
        MERGE_PATCH,
      ),
    );
    await request('PatchStatus', `sessionreference ${namespace}/${name}`, () =>
      this.api.patchNamespacedCustomObjectStatus(
        {
          ...this.at(namespace, SESSION_REFERENCE.plural),
          name,
          body: { status: { detachedAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') } },
        },
        MERGE_PATCH,
      ),
    );
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
    const work = requestUnlessGone('Delete', `sessionreference ${namespace}/${name}`, () =>
      this.api.deleteNamespacedCustomObject({ ...this.at(namespace, SESSION_REFERENCE.plural), name }),
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
      this.api.listNamespacedCustomObject({
        ...this.references(namespace),
        fieldSelector: `spec.worktree=${worktree},spec.state=Detached`,
      }),
    )) as { items: { metadata: { name: string; uid?: string; resourceVersion?: string } }[] };
    const pruned: string[] = [];
    for (const { metadata } of list.items) {
      const { name, uid, resourceVersion } = metadata;
      try {
        const deleted: unknown = await requestUnlessGone(
          'Delete',
          `sessionreference ${namespace}/${name}`,
          () =>
            this.api.deleteNamespacedCustomObject({
              ...this.references(namespace),
              name,
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
