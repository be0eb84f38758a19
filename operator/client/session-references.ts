/**
 * The platform's side of the reference index, as functions platforms call instead of writing objects by hand.
 *
 * attach: write the reference, then read the Sandbox live; if it is being deleted (or gone), withdraw the
 * reference and fail with SandboxDeletingError. Together with the controller, which LISTs references only
 * after the deletion's own write, either the controller sees the reference or the attach sees the deletion.
 * detach: mark the reference Detached (a tombstone that still blocks destruction).
 * forget: delete the reference, best effort, within a deadline; never throws (the session's deletion goes on).
 * pruneWorktree: delete the tombstones of a worktree.
 */
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, SANDBOX, SESSION_REFERENCE, VERSION, API_VERSION } from '../api/names.ts';
import type { SessionReferenceSpec } from '../api/session-reference.ts';
import { parseSandbox } from '../api/parse.ts';
import { KubeRequestError, request, requestUnlessGone } from '../controller/errors.ts';
import { MERGE_PATCH } from '../controller/kube/clients.ts';
import { sessionReferenceName } from './names.ts';

export class SandboxDeletingError extends Error {
  readonly kind = 'SandboxDeleting';
  constructor(
    readonly namespace: string,
    readonly sandbox: string,
    readonly since: string | undefined,
  ) {
    super(
      since === undefined
        ? `sandbox ${namespace}/${sandbox} does not exist; the attach was withdrawn`
        : `sandbox ${namespace}/${sandbox} is being deleted (since ${since}); the attach was refused and withdrawn`,
    );
    this.name = 'SandboxDeletingError';
  }
}

export type AttachRequest = Omit<SessionReferenceSpec, 'state'> & { readonly namespace: string };
export type ForgetResult =
  { readonly kind: 'Forgotten' | 'AlreadyGone' } | { readonly kind: 'Failed'; readonly error: unknown };

export class SessionReferences {
  private readonly api: CustomObjectsApi;
  constructor(config: KubeConfig) {
    this.api = config.makeApiClient(CustomObjectsApi);
  }

  private at(namespace: string, plural: string) {
    return { group: GROUP, version: VERSION, namespace, plural };
  }

  /** Records the attach; returns the reference's name. Throws SandboxDeletingError when the fence is up. */
  async attach(req: AttachRequest): Promise<string> {
    const { namespace, ...spec } = req;
    const name = sessionReferenceName(spec.sandbox, spec.session);
    const body = {
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: { name, namespace },
      spec: { ...spec, state: 'Attached' },
    };
    try {
      await request('Create', `sessionreference ${namespace}/${name}`, () =>
        this.api.createNamespacedCustomObject({ ...this.at(namespace, SESSION_REFERENCE.plural), body }),
      );
    } catch (error) {
      if (!(error instanceof KubeRequestError && error.status === 409)) throw error;
      // Re-attach: the reference (perhaps a tombstone) exists; make it Attached with the new route.
      await request('Patch', `sessionreference ${namespace}/${name}`, () =>
        this.api.patchNamespacedCustomObject(
          {
            ...this.at(namespace, SESSION_REFERENCE.plural),
            name,
            body: { spec: { state: 'Attached', route: spec.route } },
          },
          MERGE_PATCH,
        ),
      );
    }
    // The fence check reads the Sandbox live, after the reference is written.
    const raw: unknown = await requestUnlessGone('Get', `sandbox ${namespace}/${spec.sandbox}`, () =>
      this.api.getNamespacedCustomObject({ ...this.at(namespace, SANDBOX.plural), name: spec.sandbox }),
    );
    const sandbox = raw === undefined ? undefined : parseSandbox(raw);
    const deletionTimestamp = sandbox?.ok ? sandbox.value.metadata.deletionTimestamp : undefined;
    if (raw === undefined || deletionTimestamp !== undefined) {
      await requestUnlessGone('Delete', `sessionreference ${namespace}/${name}`, () =>
        this.api.deleteNamespacedCustomObject({ ...this.at(namespace, SESSION_REFERENCE.plural), name }),
      );
      throw new SandboxDeletingError(
        namespace,
        spec.sandbox,
        deletionTimestamp === undefined ? undefined : String(deletionTimestamp),
      );
    }
    return name;
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

  /** Deletes the detached references of `worktree`; returns their names. */
  async pruneWorktree(namespace: string, worktree: string): Promise<string[]> {
    const list = (await request('List', `sessionreferences of worktree ${worktree}`, () =>
      this.api.listNamespacedCustomObject({
        ...this.at(namespace, SESSION_REFERENCE.plural),
        fieldSelector: `spec.worktree=${worktree},spec.state=Detached`,
      }),
    )) as { items: { metadata: { name: string } }[] };
    const names = list.items.map((item) => item.metadata.name);
    for (const name of names) {
      await requestUnlessGone('Delete', `sessionreference ${namespace}/${name}`, () =>
        this.api.deleteNamespacedCustomObject({ ...this.at(namespace, SESSION_REFERENCE.plural), name }),
      );
    }
    return names;
  }
}
