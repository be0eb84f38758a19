/**
 * The moves of issue 25 that go around the usual paths: writes through the status subresources of a sandbox
 * pod and of its eviction guard (which store label and finalizer changes too), a Sandbox's finalizer stripped
 * (refused unless its namespace terminates), an administrator's erase request, and a host's late reference
 * (written without the client's fence, its withdraw failed and retried).
 *
 * A protected write is a JSON Patch that first tests the value it changes: an answer of 2xx therefore means the
 * API server stored the change, which the judgement (guarded-write) needs to call it a breach without reading
 * the object before and after.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  GROUP,
  LABELS,
  SANDBOX,
  SESSION_REFERENCE,
  VERSION,
} from '../../operator/api/names.ts';
import { sessionReferenceName } from '../../operator/client/names.ts';
import type { SequenceContext } from './agent-host.ts';
import { act } from './users.ts';

const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const pointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const code = (error: unknown) => (error as { code?: unknown }).code;

const sandboxAt = (ctx: SequenceContext, name: string) => ({
  group: GROUP,
  version: VERSION,
  namespace: ctx.namespace,
  plural: SANDBOX.plural,
  name,
});

/** The label changed (to another sandbox's name) or removed, testing that it is still this sandbox's. */
const relabel = (sandbox: string, remove: boolean) => {
  const path = `/metadata/labels/${pointer(LABELS.sandbox)}`;
  return [
    { op: 'test', path, value: sandbox },
    remove ? { op: 'remove', path } : { op: 'replace', path, value: `${sandbox}-elsewhere` },
  ];
};

/** Our finalizer removed at the index it was read at, testing that it is still there. */
function stripFinalizer(finalizers: readonly string[] | undefined) {
  const at = (finalizers ?? []).indexOf(EXCLUSIVITY_FINALIZER);
  if (at < 0) return undefined;
  const path = `/metadata/finalizers/${at}`;
  return [
    { op: 'test', path, value: EXCLUSIVITY_FINALIZER },
    { op: 'remove', path },
  ];
}

/** A principal with pods/status (a node, a bot role written as `pods/*`) relabels a sandbox pod. */
export const statusRelabelPod = (ctx: SequenceContext, sandbox: string, ordinal: number, remove: boolean) =>
  act(
    ctx,
    'status-write',
    `user ${remove ? 'removes' : 'changes'} the sandbox label of pod ${sandbox}-${ordinal} through pods/status`,
    sandbox,
    ({ core }) =>
      core.patchNamespacedPodStatus(
        { namespace: ctx.namespace, name: `${sandbox}-${ordinal}`, body: relabel(sandbox, remove) },
        JSON_PATCH,
      ),
  );

/** The same principal strips the pod's exclusivity finalizer. */
export const statusStripPodFinalizer = (ctx: SequenceContext, sandbox: string, ordinal: number) =>
  act(
    ctx,
    'status-write',
    `user strips the finalizer of pod ${sandbox}-${ordinal} through pods/status`,
    sandbox,
    async ({ core }) => {
      const name = `${sandbox}-${ordinal}`;
      const pod = await core.readNamespacedPod({ namespace: ctx.namespace, name });
      const patch = stripFinalizer(pod.metadata?.finalizers);
      if (patch === undefined) return 'skipped: no finalizer of ours';
      await core.patchNamespacedPodStatus({ namespace: ctx.namespace, name, body: patch }, JSON_PATCH);
      return 'ok';
    },
  );

/** A principal with poddisruptionbudgets/status relabels the eviction guard out of its own protection. */
export const statusRelabelGuard = (ctx: SequenceContext, sandbox: string) =>
  act(
    ctx,
    'status-write',
    `user changes the sandbox label of the PodDisruptionBudget of ${sandbox} through its status`,
    sandbox,
    ({ policy }) =>
      policy.patchNamespacedPodDisruptionBudgetStatus(
        { namespace: ctx.namespace, name: `${sandbox}-sandbox`, body: relabel(sandbox, false) },
        JSON_PATCH,
      ),
  );

/** A user strips the Sandbox's exclusivity finalizer: refused unless its namespace is terminating. */
export const stripSandboxFinalizer = (ctx: SequenceContext, sandbox: string, detail?: string) =>
  act(
    ctx,
    'strip-finalizer',
    detail ?? `user strips the finalizer of ${sandbox}`,
    sandbox,
    async ({ custom }) => {
      const live = (await custom.getNamespacedCustomObject(sandboxAt(ctx, sandbox))) as {
        metadata: { finalizers?: string[] };
      };
      const patch = stripFinalizer(live.metadata.finalizers);
      if (patch === undefined) return 'skipped: no finalizer of ours';
      await custom.patchNamespacedCustomObject({ ...sandboxAt(ctx, sandbox), body: patch }, JSON_PATCH);
      return 'ok';
    },
  );

/** An administrator's erase request (docs/operations.md#capacityexceeded): a new value, so a new request. */
export const requestErase = (ctx: SequenceContext, sandbox: string) =>
  act(ctx, 'erase', `administrator requests an erase of ${sandbox}'s references`, sandbox, ({ custom }, op) =>
    custom.patchNamespacedCustomObject(
      {
        ...sandboxAt(ctx, sandbox),
        body: { metadata: { annotations: { [ANNOTATIONS.eraseReferences]: `soak-request-${op.id}` } } },
      },
      MERGE,
    ),
  );

type LiveSandbox = { metadata: { deletionTimestamp?: string }; status?: { decision?: { verdict?: string } } };

/**
 * A host's reference that lands after the deletion's Exclusive decision was recorded: the host wrote it, read
 * the fence, and its withdraw failed; it retries the withdraw `withdrawAfterMs` later (a DELETE preconditioned
 * on the uid it created, as the client withdraws). Aimed after the decision (it waits up to 4 s for one), since
 * that is what a late reference must never undo; a sandbox not being deleted, or not decided Exclusive in
 * time, is skipped. The host knows its attach failed: the model holds no presence for it.
 */
export const lateReference = (
  ctx: SequenceContext,
  session: string,
  sandbox: string,
  withdrawAfterMs: number,
) =>
  act(
    ctx,
    'late-reference',
    `host of ${session} writes its reference to ${sandbox} after the Exclusive decision (its withdraw failed), retries the withdraw ${withdrawAfterMs} ms later`,
    sandbox,
    async ({ custom }, op) => {
      const deadline = Date.now() + 4_000;
      for (;;) {
        const live = (await custom
          .getNamespacedCustomObject(sandboxAt(ctx, sandbox))
          .catch((error: unknown) => {
            if (code(error) === 404) return undefined;
            throw error;
          })) as LiveSandbox | undefined;
        if (live === undefined) return 'skipped: gone';
        if (live.metadata.deletionTimestamp === undefined) return 'skipped: not being deleted';
        if (live.status?.decision?.verdict === 'Exclusive') break;
        if (Date.now() > deadline) return 'skipped: not decided Exclusive within 4 s';
        await sleep(50);
      }
      const spec = ctx.model.session(session);
      const references = {
        group: GROUP,
        version: VERSION,
        namespace: ctx.namespace,
        plural: SESSION_REFERENCE.plural,
      };
      const name = sessionReferenceName(sandbox, session);
      let uid: string;
      try {
        const created = (await custom.createNamespacedCustomObject({
          ...references,
          body: {
            apiVersion: API_VERSION,
            kind: SESSION_REFERENCE.kind,
            metadata: { name, namespace: ctx.namespace },
            spec: {
              sandbox,
              session,
              ...(spec.worktree === undefined ? {} : { worktree: spec.worktree }),
              route: `shared-control-v1/${session}/${op.id}`,
              role: spec.role,
              ...(spec.role === 'Subagent' ? { parentSession: 'workspace_parent' } : {}),
              state: 'Attached',
            },
          },
        })) as { metadata: { uid: string } };
        uid = created.metadata.uid;
      } catch (error) {
        if (code(error) === 409) return 'skipped: the reference exists';
        throw error;
      }
      await sleep(withdrawAfterMs);
      try {
        await custom.deleteNamespacedCustomObject({ ...references, name, body: { preconditions: { uid } } });
        return 'written, withdrawn by its host';
      } catch (error) {
        if (code(error) === 404) return 'written, gone before the withdraw';
        throw error;
      }
    },
  );
