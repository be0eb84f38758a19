/**
 * Issue 28's actors: an administrator's template and warm pool in the sequence's namespace (made with the
 * sandboxes), the pool resized through `/scale` and through its spec, the template changed (a rollout, under
 * either update strategy), the pool deleted; a user's SandboxClaims made and deleted, and other sessions'
 * hosts attaching to a claimed sandbox through operator/client, as to any other. A claim's bound sandbox and
 * reference enter the model once its status names them (model.ts `bound`), so every invariant judges them.
 *
 * After the operations, `settleClaims` judges "nothing stuck" (invariant 12, pool-settled): every live claim
 * is bound and Ready, and the pool's ready sandboxes reach its replicas, within the release bound.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  API_VERSION,
  GROUP,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
  VERSION,
} from '../../operator/api/names.ts';
import { sandboxManifest } from '../integration/controller/fixtures.ts';
import { attach, forget, outcomeOf, type SequenceContext } from './agent-host.ts';
import type { Violation } from './invariants.ts';
import { actorClients } from './kube.ts';
import type { PoolSpec } from './model.ts';
import { placement } from './nodes.ts';
import { REFUSE_LABEL } from './platform.ts';

export const POOL = 'pool';
export const TEMPLATE = 'tpl';
/** The claim names a sequence uses: few, so a claim is deleted and made again under the same name. */
export const CLAIMS = ['claim-0', 'claim-1'] as const;
/** How long a claim's maker waits for the binding before it gives up (settle judges it later). */
const BIND_WAIT_MS = 15_000;

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const objects = (ctx: SequenceContext, plural: string) => ({
  group: GROUP,
  version: VERSION,
  namespace: ctx.namespace,
  plural,
});

/** The template's blueprint: the soak's sandbox (one pod on the sequence's nodes), Retain, no worktree. */
function templateSpec(namespace: string, rollout: number) {
  const { spec } = sandboxManifest(namespace, TEMPLATE, { onNode: false, replicas: 1 });
  return {
    ...spec,
    disruption: { holdSeconds: 2 },
    podTemplate: {
      metadata: { annotations: { 'soak.example/rollout': String(rollout) } },
      spec: { ...spec.podTemplate.spec, ...placement(namespace) },
    },
  };
}

/** The administrator's template and pool (with the sandboxes, before any operation). */
export async function createPool(ctx: SequenceContext, pool: PoolSpec): Promise<void> {
  const op = ctx.model.begin('harness', `administrator creates template ${TEMPLATE} and pool ${POOL}`);
  const { custom } = actorClients(ctx.connections, op.userAgent);
  await custom.createNamespacedCustomObject({
    ...objects(ctx, SANDBOX_TEMPLATE.plural),
    body: {
      apiVersion: API_VERSION,
      kind: SANDBOX_TEMPLATE.kind,
      metadata: { name: TEMPLATE, namespace: ctx.namespace },
      spec: templateSpec(ctx.namespace, 0),
    },
  });
  await custom.createNamespacedCustomObject({
    ...objects(ctx, SANDBOX_WARM_POOL.plural),
    body: {
      apiVersion: API_VERSION,
      kind: SANDBOX_WARM_POOL.kind,
      metadata: { name: POOL, namespace: ctx.namespace },
      spec: {
        templateRef: { name: TEMPLATE },
        replicas: pool.replicas,
        updateStrategy: { type: pool.updateStrategy },
      },
    },
  });
  ctx.model.end(op, 'ok');
}

async function poolOp(
  ctx: SequenceContext,
  kind: 'scale-pool' | 'rollout' | 'delete-pool',
  detail: string,
  run: (clients: ReturnType<typeof actorClients>, opId: number) => Promise<unknown>,
): Promise<void> {
  const op = ctx.model.begin(kind, detail);
  try {
    await run(actorClients(ctx.connections, op.userAgent), op.id);
    ctx.model.end(op, 'ok');
  } catch (error) {
    ctx.model.end(op, outcomeOf(error));
  }
}

/** An autoscaler's (or `kubectl scale`'s) resize through `/scale`, or an administrator's through the spec. */
export const scalePool = (ctx: SequenceContext, replicas: number, via: 'scale' | 'spec') =>
  poolOp(ctx, 'scale-pool', `administrator scales ${POOL} to ${replicas} through ${via}`, ({ custom }) =>
    via === 'scale'
      ? custom.patchNamespacedCustomObjectScale(
          { ...objects(ctx, SANDBOX_WARM_POOL.plural), name: POOL, body: { spec: { replicas } } },
          MERGE,
        )
      : custom.patchNamespacedCustomObject(
          { ...objects(ctx, SANDBOX_WARM_POOL.plural), name: POOL, body: { spec: { replicas } } },
          MERGE,
        ),
  );

/** The pool's update strategy set, then the template changed: a rollout of the pool's unclaimed sandboxes. */
export const rollout = (ctx: SequenceContext, strategy: PoolSpec['updateStrategy']) =>
  poolOp(
    ctx,
    'rollout',
    `administrator changes template ${TEMPLATE} (pool strategy ${strategy})`,
    async ({ custom }, id) => {
      await custom.patchNamespacedCustomObject(
        {
          ...objects(ctx, SANDBOX_WARM_POOL.plural),
          name: POOL,
          body: { spec: { updateStrategy: { type: strategy } } },
        },
        MERGE,
      );
      await custom.patchNamespacedCustomObject(
        {
          ...objects(ctx, SANDBOX_TEMPLATE.plural),
          name: TEMPLATE,
          body: {
            spec: { podTemplate: { metadata: { annotations: { 'soak.example/rollout': String(id) } } } },
          },
        },
        MERGE,
      );
    },
  );

export const deletePool = (ctx: SequenceContext) =>
  poolOp(ctx, 'delete-pool', `administrator deletes pool ${POOL}`, ({ custom }) =>
    custom.deleteNamespacedCustomObject({ ...objects(ctx, SANDBOX_WARM_POOL.plural), name: POOL }),
  );

type LiveClaim = {
  metadata: { name: string; uid?: string; deletionTimestamp?: string };
  spec?: { warmPoolRef?: { name: string } };
  status?: {
    sandbox?: string;
    reference?: string;
    launchType?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
};

const condition = (claim: LiveClaim, type: string) => claim.status?.conditions?.find((c) => c.type === type);

/** What the model learns from a claim's status: its sandbox and reference enter the model once named. */
function learn(ctx: SequenceContext, opId: number, claim: LiveClaim): boolean {
  const known = ctx.model.claims.get(claim.metadata.name);
  const { sandbox, reference, launchType } = claim.status ?? {};
  if (known === undefined || known.sandbox !== undefined) return known?.sandbox !== undefined;
  if (sandbox === undefined || reference === undefined) return false;
  known.sandbox = sandbox;
  known.reference = reference;
  known.launchType = launchType;
  ctx.model.bound(claim.metadata.name, sandbox, 1);
  // Seen by its maker: the reference exists from the maker's end on. Seen only while settling: the sandbox is
  // judged, its reference is not (the model cannot say since when it stood).
  const op = ctx.model.ops[opId];
  if (op !== undefined && !Number.isNaN(op.endedAt))
    ctx.model.attached(op, reference, sandbox, ctx.model.session(known.session));
  return true;
}

/** A user's SandboxClaim for a session (warm from the pool, or cold from the template), awaited bound. */
export async function claim(ctx: SequenceContext, name: string, session: string, cold: boolean) {
  const spec = ctx.model.session(session);
  const op = ctx.model.begin(
    'claim',
    `user claims ${name} for ${session} ${cold ? `cold from ${TEMPLATE}` : `from ${POOL}`}`,
  );
  const { custom } = actorClients(ctx.connections, op.userAgent);
  try {
    await custom.createNamespacedCustomObject({
      ...objects(ctx, SANDBOX_CLAIM.plural),
      body: {
        apiVersion: API_VERSION,
        kind: SANDBOX_CLAIM.kind,
        metadata: { name, namespace: ctx.namespace },
        spec: {
          ...(cold ? { templateRef: { name: TEMPLATE } } : { warmPoolRef: { name: POOL } }),
          session,
          ...(spec.worktree === undefined ? {} : { worktree: spec.worktree }),
          route: `shared-control-v1/${session}/${op.id}`,
          role: spec.role,
          ...(spec.role === 'Subagent' ? { parentSession: 'workspace_parent' } : {}),
        },
      },
    });
  } catch (error) {
    ctx.model.end(op, outcomeOf(error)); // 409: the name is taken (a claim not yet gone): nothing changed
    return;
  }
  ctx.model.claims.set(name, {
    name,
    session,
    sandbox: undefined,
    reference: undefined,
    launchType: undefined,
    deleted: false,
  });
  const deadline = Date.now() + BIND_WAIT_MS;
  for (;;) {
    const live = (await custom
      .getNamespacedCustomObject({ ...objects(ctx, SANDBOX_CLAIM.plural), name })
      .catch(() => undefined)) as LiveClaim | undefined;
    const { sandbox, reference, launchType } = live?.status ?? {};
    if (live !== undefined && sandbox !== undefined && reference !== undefined) {
      ctx.model.end(op, `bound ${launchType ?? '?'} to ${sandbox}`);
      learn(ctx, op.id, live);
      return;
    }
    if (Date.now() > deadline) {
      ctx.model.end(op, `not bound in ${BIND_WAIT_MS} ms: ${JSON.stringify(live?.status?.conditions ?? [])}`);
      return;
    }
    await sleep(200);
  }
}

/** A user deletes a claim: its reference may go from now on (the operator forgets it), then its sandbox. */
export async function deleteClaim(ctx: SequenceContext, name: string): Promise<void> {
  const known = ctx.model.claims.get(name);
  const op = ctx.model.begin('delete-sandbox-claim', `user deletes ${name}`, {
    ...(known?.sandbox === undefined ? {} : { sandbox: known.sandbox }),
    ...(known?.reference === undefined ? {} : { reference: known.reference }),
  });
  if (known?.reference !== undefined) ctx.model.removing(op, known.reference, true);
  const { custom } = actorClients(ctx.connections, op.userAgent);
  try {
    await custom.deleteNamespacedCustomObject({ ...objects(ctx, SANDBOX_CLAIM.plural), name });
    ctx.model.end(op, 'ok');
    if (known) known.deleted = true;
  } catch (error) {
    ctx.model.end(op, outcomeOf(error));
    if (known && outcomeOf(error) === 'HTTP 404') known.deleted = true;
  }
}

/** Another session's host attaches to a claimed sandbox (sharing it), as to any sandbox. */
export async function attachToClaimed(ctx: SequenceContext, session: string, name: string): Promise<void> {
  const known = ctx.model.claims.get(name);
  if (known?.sandbox === undefined || known.session === session) {
    const op = ctx.model.begin('attach', `${session} -> the sandbox of ${name}`);
    ctx.model.end(
      op,
      known?.sandbox === undefined ? 'skipped: not bound' : "skipped: the claim's own session",
    );
    return;
  }
  await attach(ctx, session, known.sandbox);
}

/** That session's host forgets the claimed sandbox: once the claim is deleted too, it may be released. */
export async function forgetClaimed(ctx: SequenceContext, session: string, name: string): Promise<void> {
  const known = ctx.model.claims.get(name);
  if (known?.sandbox === undefined || known.session === session) {
    const op = ctx.model.begin('forget', `${session} forgets the sandbox of ${name}`);
    ctx.model.end(
      op,
      known?.sandbox === undefined ? 'skipped: not bound' : "skipped: the claim's own session",
    );
    return;
  }
  await forget(ctx, session, known.sandbox);
}

/**
 * Invariant 12 (pool-settled): nothing stuck. Every live claim is bound (its pool gone is the one excuse for
 * an unbound warm claim) and Ready, and the pool's ready sandboxes reach its replicas, within `boundMs` of the
 * last operation — unless the platform refuses the namespace's guards at the end (a sandbox it refuses the
 * guard of runs no pod, so it is never Ready: docs/soak.md).
 */
export async function settleClaims(
  ctx: SequenceContext,
  boundMs: number,
  violations: Violation[],
): Promise<void> {
  const op = ctx.model.begin('harness', 'settle claims and pool');
  const { custom, core } = actorClients(ctx.connections, op.userAgent);
  const refused = (await core.readNamespace({ name: ctx.namespace })).metadata?.labels?.[REFUSE_LABEL];
  if (refused === 'true') {
    ctx.model.end(op, 'skipped: the platform refuses the guards');
    return;
  }
  const deadline = Date.now() + boundMs;
  let stuck: string[];
  for (;;) {
    stuck = [];
    const pool = (await custom
      .getNamespacedCustomObject({ ...objects(ctx, SANDBOX_WARM_POOL.plural), name: POOL })
      .catch((error: unknown) => {
        if (outcomeOf(error) === 'HTTP 404') return undefined;
        throw error;
      })) as
      | {
          metadata: { generation?: number; deletionTimestamp?: string };
          spec: { replicas: number };
          status?: { readyReplicas?: number; replicas?: number; observedGeneration?: number };
        }
      | undefined;
    if (pool !== undefined && pool.metadata.deletionTimestamp === undefined) {
      const { readyReplicas = 0, replicas = 0, observedGeneration } = pool.status ?? {};
      if (
        readyReplicas !== pool.spec.replicas ||
        replicas !== pool.spec.replicas ||
        observedGeneration !== pool.metadata.generation
      )
        stuck.push(
          `pool ${POOL}: spec.replicas ${pool.spec.replicas}, status ${JSON.stringify(pool.status ?? {})}`,
        );
    }
    const claims = (await custom.listNamespacedCustomObject(objects(ctx, SANDBOX_CLAIM.plural))) as {
      items: LiveClaim[];
    };
    for (const live of claims.items) {
      if (live.metadata.deletionTimestamp !== undefined) continue;
      learn(ctx, op.id, live);
      const bound = condition(live, 'Bound');
      const ready = condition(live, 'Ready');
      const poolGone = pool === undefined || pool.metadata.deletionTimestamp !== undefined;
      if (live.status?.sandbox === undefined) {
        if (live.spec?.warmPoolRef !== undefined && poolGone && bound?.reason === 'WarmPoolNotFound')
          continue;
        stuck.push(`claim ${live.metadata.name} unbound: ${JSON.stringify(live.status ?? {})}`);
      } else if (bound?.status !== 'True' || ready?.status !== 'True')
        stuck.push(`claim ${live.metadata.name} not Ready: ${JSON.stringify(live.status)}`);
    }
    if (stuck.length === 0 || Date.now() > deadline) break;
    await sleep(500);
  }
  for (const what of stuck)
    violations.push({
      invariant: 'pool-settled',
      signature: `pool-settled/operator/${what.startsWith('pool') ? 'pool' : what.includes('unbound') ? 'unbound' : 'not-ready'}`,
      message: `${what}, ${boundMs} ms after the last operation`,
    });
  ctx.model.end(op, stuck.length === 0 ? 'ok' : `${stuck.length} stuck`);
}
