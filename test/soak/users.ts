/**
 * Users and GitOps: delete Sandboxes with each propagation policy, delete, evict and relabel pods, delete
 * the eviction guard, remove or edit annotations, `kubectl replace` and server-side apply from the Git
 * manifest, and a GitOps prune (foreground, as Argo CD does). Their outcomes are recorded but not trusted:
 * whether a pod was stopped is judged from the audit log.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ANNOTATIONS, GROUP, LABELS, SANDBOX, VERSION } from '../../operator/api/names.ts';
import { sandboxManifest } from '../integration/controller/fixtures.ts';
import { outcomeOf, type SequenceContext } from './agent-host.ts';
import { actorClients } from './kube.ts';
import { placement } from './nodes.ts';
import type { OpKind, OpRecord, SandboxSpec } from './model.ts';

export type Propagation = 'Background' | 'Foreground' | 'Orphan';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const APPLY = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

/** One user operation: its outcome is 'ok', what `run` says it did instead (a skip), or the error's status. */
export async function act(
  ctx: SequenceContext,
  kind: OpKind,
  detail: string,
  sandbox: string,
  run: (clients: ReturnType<typeof actorClients>, op: OpRecord) => Promise<unknown>,
): Promise<string> {
  const op = ctx.model.begin(kind, detail, { sandbox });
  try {
    const said = await run(actorClients(ctx.connections, op.userAgent), op);
    ctx.model.end(op, typeof said === 'string' ? said : 'ok');
  } catch (error) {
    ctx.model.end(op, outcomeOf(error));
  }
  return op.outcome;
}

/** A persistent workspace's one claim template: the claim is `workspace-<sandbox>`. */
export const WORKSPACE_CLAIM = {
  metadata: { name: 'workspace' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } },
};

/** The erase-references value a Git manifest keeps (see SandboxSpec.manifestErase). */
export const GIT_ERASE = 'kept-by-gitops';

/**
 * The manifest in Git: what `kubectl replace` and GitOps send (no status, no finalizers). Its pods go to the
 * sequence's own nodes (nodes.ts).
 */
export function gitManifest(namespace: string, sandbox: SandboxSpec) {
  const manifest = baseManifest(namespace, sandbox);
  const { podTemplate } = manifest.spec;
  return {
    ...manifest,
    spec: {
      ...manifest.spec,
      // A drain moves a Reschedule sandbox's pod within 2 s of its last Running turn (issue 27).
      disruption: { holdSeconds: 2 },
      ...(sandbox.idleSeconds === undefined ? {} : { idle: { suspendAfterSeconds: sandbox.idleSeconds } }),
      podTemplate: { ...podTemplate, spec: { ...podTemplate.spec, ...placement(namespace) } },
    },
  };
}

function baseManifest(namespace: string, sandbox: SandboxSpec) {
  const keep = sandbox.adopted && sandbox.manifestKeepsAdoption;
  return sandboxManifest(namespace, sandbox.name, {
    onNode: false,
    ...(sandbox.worktree === undefined ? {} : { worktree: sandbox.worktree }),
    replicas: sandbox.replicas,
    shellReaper: sandbox.shellReaper,
    ...(sandbox.workspace ? { volumeClaimTemplates: [WORKSPACE_CLAIM] } : {}),
    ...(sandbox.cleanupTtlSeconds === undefined
      ? {}
      : {
          cleanup: {
            policy: 'DeleteWhenUnreferenced',
            ttlSecondsAfterUnreferenced: sandbox.cleanupTtlSeconds,
          },
        }),
    ...(keep || sandbox.manifestErase
      ? {
          annotations: {
            ...(keep ? { [ANNOTATIONS.adoptedFrom]: 'legacy-platform' } : {}),
            ...(sandbox.manifestErase ? { [ANNOTATIONS.eraseReferences]: GIT_ERASE } : {}),
          },
        }
      : {}),
  });
}

const sandboxAt = (ctx: SequenceContext, name: string) => ({
  group: GROUP,
  version: VERSION,
  namespace: ctx.namespace,
  plural: SANDBOX.plural,
  name,
});

export const deleteSandbox = (ctx: SequenceContext, sandbox: string, propagation: Propagation, by: string) =>
  act(ctx, 'delete-sandbox', `${by} deletes ${sandbox} (${propagation})`, sandbox, ({ custom }) =>
    custom.deleteNamespacedCustomObject({ ...sandboxAt(ctx, sandbox), propagationPolicy: propagation }),
  );

export const deletePod = (ctx: SequenceContext, sandbox: string, ordinal: number) =>
  act(ctx, 'delete-pod', `user deletes pod ${sandbox}-${ordinal}`, sandbox, ({ core }) =>
    core.deleteNamespacedPod({ namespace: ctx.namespace, name: `${sandbox}-${ordinal}` }),
  );

/**
 * A user (or a GitOps prune) deletes a sandbox's workspace claim: claim protection refuses it but for the
 * operator or the deletion override, and workspace-kept judges any that the API server accepted.
 */
export const deleteWorkspaceClaim = (ctx: SequenceContext, sandbox: string) =>
  act(ctx, 'delete-claim', `user deletes the workspace claim of ${sandbox}`, sandbox, ({ core }) =>
    core.deleteNamespacedPersistentVolumeClaim({
      namespace: ctx.namespace,
      name: `${WORKSPACE_CLAIM.metadata.name}-${sandbox}`,
    }),
  );

export const evictPod = (ctx: SequenceContext, sandbox: string, ordinal: number) =>
  act(ctx, 'evict-pod', `drain evicts pod ${sandbox}-${ordinal}`, sandbox, ({ core }) =>
    core.createNamespacedPodEviction({
      namespace: ctx.namespace,
      name: `${sandbox}-${ordinal}`,
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: `${sandbox}-${ordinal}`, namespace: ctx.namespace },
      },
    }),
  );

export const relabelPod = (ctx: SequenceContext, sandbox: string, ordinal: number, remove: boolean) =>
  act(
    ctx,
    'relabel-pod',
    `user ${remove ? 'removes' : 'changes'} the sandbox label of pod ${sandbox}-${ordinal}`,
    sandbox,
    ({ core }) =>
      core.patchNamespacedPod(
        {
          namespace: ctx.namespace,
          name: `${sandbox}-${ordinal}`,
          body: { metadata: { labels: { [LABELS.sandbox]: remove ? null : `${sandbox}-elsewhere` } } },
        },
        MERGE,
      ),
  );

export const deleteGuard = (ctx: SequenceContext, sandbox: string) =>
  act(ctx, 'delete-pdb', `user deletes the PodDisruptionBudget of ${sandbox}`, sandbox, ({ policy }) =>
    policy.deleteNamespacedPodDisruptionBudget({ namespace: ctx.namespace, name: `${sandbox}-sandbox` }),
  );

export const removeAdoption = (ctx: SequenceContext, sandbox: string) =>
  act(ctx, 'annotate', `user removes ${ANNOTATIONS.adoptedFrom} from ${sandbox}`, sandbox, ({ custom }) =>
    custom.patchNamespacedCustomObject(
      {
        ...sandboxAt(ctx, sandbox),
        body: { metadata: { annotations: { [ANNOTATIONS.adoptedFrom]: null } } },
      },
      MERGE,
    ),
  );

export const annotate = (ctx: SequenceContext, sandbox: string, value: number) =>
  act(ctx, 'annotate', `user annotates ${sandbox} note=${value}`, sandbox, ({ custom }) =>
    custom.patchNamespacedCustomObject(
      {
        ...sandboxAt(ctx, sandbox),
        body: { metadata: { annotations: { 'soak.example/note': String(value) } } },
      },
      MERGE,
    ),
  );

/** spec.operatingMode: Suspended (the operator stops the pods, keeps everything else) or Running again. */
export const setOperatingMode = (ctx: SequenceContext, sandbox: string, mode: 'Running' | 'Suspended') =>
  act(
    ctx,
    mode === 'Suspended' ? 'suspend' : 'resume',
    `user sets ${sandbox}'s spec.operatingMode to ${mode}`,
    sandbox,
    ({ custom }) =>
      custom.patchNamespacedCustomObject(
        { ...sandboxAt(ctx, sandbox), body: { spec: { operatingMode: mode } } },
        MERGE,
      ),
  );

/**
 * `kubectl scale sandbox --replicas=1` (or the same through its spec) of a sandbox of two pods: the CRD
 * refuses the decrease, since the eviction guard expects spec.replicas pods; stored, it would let the
 * drain that follows evict the pod beyond (judged by no-wrongful-stop).
 */
export const lowerReplicas = (ctx: SequenceContext, sandbox: string, via: 'scale' | 'spec') =>
  act(
    ctx,
    'lower-replicas',
    `user lowers ${sandbox}'s spec.replicas to 1 through ${via === 'scale' ? '/scale' : 'its spec'}`,
    sandbox,
    ({ custom }) => {
      const request = { ...sandboxAt(ctx, sandbox), body: { spec: { replicas: 1 } } };
      return via === 'scale'
        ? custom.patchNamespacedCustomObjectScale(request, MERGE)
        : custom.patchNamespacedCustomObject(request, MERGE);
    },
  );

/** `kubectl replace -f` of the Git manifest: a PUT at the live resourceVersion, without status or finalizers. */
export const replace = (ctx: SequenceContext, sandbox: string, by: string) =>
  act(ctx, 'replace', `${by} replaces ${sandbox} from its manifest`, sandbox, async ({ custom }) => {
    const live = (await custom.getNamespacedCustomObject(sandboxAt(ctx, sandbox))) as {
      metadata: { resourceVersion: string };
    };
    const manifest = gitManifest(ctx.namespace, ctx.model.sandbox(sandbox));
    await custom.replaceNamespacedCustomObject({
      ...sandboxAt(ctx, sandbox),
      body: {
        ...manifest,
        metadata: { ...manifest.metadata, resourceVersion: live.metadata.resourceVersion },
      },
    });
  });

export const apply = (ctx: SequenceContext, sandbox: string) =>
  act(ctx, 'apply', `gitops applies ${sandbox}`, sandbox, ({ custom }) =>
    custom.patchNamespacedCustomObject(
      {
        ...sandboxAt(ctx, sandbox),
        body: gitManifest(ctx.namespace, ctx.model.sandbox(sandbox)),
        fieldManager: 'gitops',
        force: true,
      },
      APPLY,
    ),
  );

export async function pause(ctx: SequenceContext, ms: number): Promise<void> {
  const op = ctx.model.begin('pause', `pause ${ms} ms`);
  await new Promise((resolve) => setTimeout(resolve, ms));
  ctx.model.end(op, 'ok');
}
