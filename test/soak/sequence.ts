/**
 * One soak sequence in its own namespace: create the sandboxes (and wait for their pods), run the
 * generated operations, then settle — every deleted sandbox that is exclusive must be gone within
 * `bounds.releaseMs` (invariant 2), every reference the model holds must still be there (3), the namespace
 * must be gone within `bounds.namespaceMs` and leave nothing behind (4), every standing pod isolated and no
 * gone sandbox’s policy left (14) — and judge the audit log (1, 3, 5, 6).
 */
import * as fc from 'fast-check';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  GROUP,
  LABELS,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_WARM_POOL,
  SESSION_REFERENCE,
  VERSION,
} from '../../operator/api/names.ts';
import { buildReferenceIndex, hasForeignReference } from '../../operator/exclusivity/index.ts';
import { INDEX_LIMITS } from '../../operator/api/limits.ts';
import type { SequenceContext } from './agent-host.ts';
import type { AuditTail } from './audit-log.ts';
import { checkSequence, type Violation } from './invariants.ts';
import type { Losses } from './judgements.ts';
import { coverageOf, type Coverage } from './coverage.ts';
import { REFUSE_LABEL } from './platform.ts';
import { actorClients, type ActorClients, type Connections } from './kube.ts';
import { SoakModel, type PoolSpec, type SandboxSpec, type SessionSpec } from './model.ts';
import { createPool, settleClaims } from './pools.ts';
import { gitManifest } from './users.ts';
import { createSequenceNodes, deleteSequenceNodes } from './nodes.ts';
import { stripSandboxFinalizer } from './admin.ts';
import { checkIsolation } from './isolation.ts';

export type Setup = {
  readonly sandboxes: readonly SandboxSpec[];
  readonly sessions: readonly SessionSpec[];
  /** The platform refuses the eviction guards from the start (the namespace is created with REFUSE_LABEL). */
  readonly guardsRefusedAtStart: boolean;
  /**
   * The sequence's last act: the namespace's deletion, then, this long after it, an administrator strips every
   * Sandbox's finalizer (allowed once the namespace terminates); undefined: the namespace's deletion alone.
   */
  readonly stripAfterNamespaceDeleteMs: number | undefined;
  /** Issue 28: an administrator's template and warm pool in the namespace, or none. */
  readonly pool: PoolSpec | undefined;
};

export type SoakEnv = {
  readonly connections: Connections;
  readonly tail: AuditTail;
  readonly operatorUser: string;
  /** The faults injected into the operator's requests of a namespace, and every operator kill (forgets them). */
  losses(namespace: string): Losses;
  readonly runTag: string;
  /** Invariant 2's bound (after the sandbox became exclusive) and invariant 4's (after the namespace DELETE). */
  readonly bounds: { readonly releaseMs: number; readonly namespaceMs: number };
  next(): number;
};

export type SequenceResult = {
  readonly namespace: string;
  readonly operations: number;
  readonly violations: readonly Violation[];
  readonly startedAt: number;
  readonly endedAt: number;
  readonly trace: readonly string[];
  readonly releaseMs: readonly number[];
  readonly namespaceMs: number | undefined;
  readonly coverage: Coverage;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sandboxes = (namespace: string) => ({
  group: GROUP,
  version: VERSION,
  namespace,
  plural: SANDBOX.plural,
});

type LiveSandbox = { metadata: { deletionTimestamp?: string; finalizers?: string[] }; status?: unknown };

async function getSandbox(clients: ActorClients, namespace: string, name: string) {
  try {
    return (await clients.custom.getNamespacedCustomObject({ ...sandboxes(namespace), name })) as LiveSandbox;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** What a Sandbox says of itself: its decision and phase, and the conditions that are True. */
function said(sandbox: LiveSandbox): string {
  const status = sandbox.status as
    | {
        phase?: string;
        decision?: unknown;
        conditions?: { type: string; status: string; reason?: string; message?: string }[];
      }
    | undefined;
  const raised = (status?.conditions ?? [])
    .filter((c) => c.status === 'True')
    .map((c) => `${c.type}/${c.reason ?? '?'}: ${c.message ?? ''}`);
  return JSON.stringify({ phase: status?.phase, decision: status?.decision, raised }).slice(0, 900);
}

async function until(deadline: number, check: () => Promise<boolean>): Promise<number | undefined> {
  for (;;) {
    if (await check().catch(() => false)) return Date.now();
    if (Date.now() > deadline) return undefined;
    await sleep(250);
  }
}

type ListedSandbox = {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
};

/** Its spec.idle ran out before all its pods were counted: it has none to wait for (issue 27). */
const suspended = (item: ListedSandbox) => item.status?.phase === 'Suspended';

/** The operator says it was refused (the platform's policy refuses the guard): no pod is to be awaited. */
const guardRefused = (item: ListedSandbox) =>
  item.status?.conditions?.some((c) => c.type === 'Misconfigured' && c.status === 'True') === true;

async function createAll(ctx: SequenceContext, setup: Setup): Promise<void> {
  const op = ctx.model.begin('harness', `create namespace and ${setup.sandboxes.length} sandbox(es)`);
  const clients = actorClients(ctx.connections, op.userAgent);
  const labels = setup.guardsRefusedAtStart ? { [REFUSE_LABEL]: 'true' } : {};
  await clients.core.createNamespace({ body: { metadata: { name: ctx.namespace, labels } } });
  await createSequenceNodes(clients, ctx.namespace);
  for (const sandbox of setup.sandboxes) {
    const manifest = gitManifest(ctx.namespace, sandbox);
    const annotations = {
      ...manifest.metadata.annotations,
      ...(sandbox.adopted ? { [ANNOTATIONS.adoptedFrom]: 'legacy-platform' } : {}),
    };
    await clients.custom.createNamespacedCustomObject({
      ...sandboxes(ctx.namespace),
      body: { ...manifest, metadata: { ...manifest.metadata, annotations } },
    });
  }
  if (setup.pool !== undefined) await createPool(ctx, setup.pool);
  const pods = setup.sandboxes.reduce((sum, s) => sum + s.replicas, 0);
  // A sandbox whose 1–3 s cleanup TTL deleted it before all its pods existed needs none: that deletion is the
  // operator at work too. Nor does one whose guard the platform refuses, once it says so (Misconfigured): its
  // pods would run unguarded. Nor one its idle clock (5–12 s) suspended first, on a loaded machine.
  const ready = await until(Date.now() + 60_000, async () => {
    const list = await clients.core.listNamespacedPod({ namespace: ctx.namespace });
    const live = (await clients.custom.listNamespacedCustomObject(sandboxes(ctx.namespace))) as {
      items: ListedSandbox[];
    };
    const waiting = new Set(
      live.items
        .filter(
          (item) => item.metadata.deletionTimestamp === undefined && !guardRefused(item) && !suspended(item),
        )
        .map((item) => item.metadata.name),
    );
    const needed = setup.sandboxes.filter((s) => waiting.has(s.name)).reduce((sum, s) => sum + s.replicas, 0);
    const podsOf = list.items.filter((pod) => waiting.has(pod.metadata?.labels?.[LABELS.sandbox] ?? ''));
    return podsOf.length >= needed;
  });
  ctx.model.end(op, ready === undefined ? 'pods missing' : 'ok');
  // Without its pods a sequence proves nothing: the operator is not working, so fail loudly, not green.
  if (ready === undefined)
    throw new Error(`the operator did not create the ${pods} pod(s) of ${ctx.namespace} within 60 s`);
}

/** Invariant 2, and the model's side of 3: what must be gone is gone, what must remain remains. */
async function settle(
  ctx: SequenceContext,
  env: SoakEnv,
  violations: Violation[],
  releaseMs: number[],
): Promise<void> {
  const op = ctx.model.begin('harness', 'settle');
  const clients = actorClients(ctx.connections, op.userAgent);
  const lastOpEnd = Math.max(...ctx.model.ops.map((o) => (Number.isNaN(o.endedAt) ? 0 : o.endedAt)));
  await Promise.all(
    [...ctx.model.sandboxes.values()].map(async (sandbox) => {
      const live = await getSandbox(clients, ctx.namespace, sandbox.name);
      const deletedAt = live?.metadata.deletionTimestamp;
      if (live === undefined || deletedAt === undefined || sandbox.adopted) return;
      const refs = [...ctx.model.references.values()].filter((r) => r.sandbox === sandbox.name);
      if (refs.some((r) => r.uncertain)) return;
      const present = ctx.model
        .present(sandbox.name)
        .map((r) => ({ ...r, role: 'Root' as const, route: '', parentSession: undefined }));
      if (hasForeignReference(buildReferenceIndex(present, INDEX_LIMITS), { worktree: sandbox.worktree }))
        return;
      const exclusiveAt = Math.max(Date.parse(deletedAt), lastOpEnd);
      const gone = await until(
        exclusiveAt + env.bounds.releaseMs,
        async () => (await getSandbox(clients, ctx.namespace, sandbox.name)) === undefined,
      );
      if (gone === undefined) {
        const still = await getSandbox(clients, ctx.namespace, sandbox.name);
        violations.push({
          invariant: 'bounded-release',
          signature: 'bounded-release/operator',
          message: `Sandbox ${sandbox.name} is exclusive and deleted since ${new Date(exclusiveAt).toISOString()} but not gone after ${env.bounds.releaseMs} ms: ${still === undefined ? 'gone now' : said(still)}; finalizers ${JSON.stringify(still?.metadata.finalizers ?? [])}`,
        });
      } else releaseMs.push(gone - exclusiveAt);
    }),
  );
  const live = (await clients.custom.listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ctx.namespace,
    plural: SESSION_REFERENCE.plural,
  })) as { items: { metadata: { name: string }; spec: { state: string } }[] };
  for (const ref of ctx.model.present()) {
    if (ref.uncertain) continue;
    const sandbox = await getSandbox(clients, ctx.namespace, ref.sandbox);
    if (sandbox === undefined) continue; // released: its references were erased (judged by the audit log)
    // Re-created since (GitOps): the past incarnation's release erased it, judged by the audit log too.
    if (ctx.model.sandboxDeletedSince(ref)) continue;
    const deleting = sandbox.metadata.deletionTimestamp !== undefined;
    const ownTombstone = ref.state === 'Detached' && ref.worktree === ctx.model.sandbox(ref.sandbox).worktree;
    const found = live.items.find((item) => item.metadata.name === ref.name);
    // An administrator's erase may have taken it, whenever the operator got to the request: judged by the
    // audit log, against the request's window (invariant 3).
    if (found === undefined && ctx.model.eraseRequested(ref.sandbox)) continue;
    if (found === undefined && !(deleting && ownTombstone))
      violations.push({
        invariant: 'no-lost-reference',
        signature: 'no-lost-reference/live',
        message: `reference ${ref.name} (${ref.session} on ${ref.sandbox}, ${ref.state}) is gone though no forget or prune removed it`,
      });
    else if (found !== undefined && found.spec.state !== ref.state)
      violations.push({
        invariant: 'no-lost-reference',
        signature: 'no-lost-reference/state',
        message: `reference ${ref.name} is ${found.spec.state}, but its last successful write made it ${ref.state}`,
      });
  }
  ctx.model.end(op, 'ok');
}

/**
 * Invariant 4: the namespace goes within its bound and nothing of it remains — also when an administrator
 * strips every Sandbox's finalizer while it terminates (`stripAfterMs`): the pods of a Sandbox gone that way
 * still hold our finalizer, and only the operator can release them (no pod may be left holding it).
 */
async function teardown(
  ctx: SequenceContext,
  env: SoakEnv,
  violations: Violation[],
  stripAfterMs: number | undefined,
): Promise<number | undefined> {
  const op = ctx.model.begin('delete-namespace', `delete namespace ${ctx.namespace}`);
  const clients = actorClients(ctx.connections, op.userAgent);
  await clients.core.deleteNamespace({ name: ctx.namespace });
  ctx.model.namespaceDeleteAt = op.startedAt;
  ctx.model.end(op, 'ok');
  if (stripAfterMs !== undefined) {
    await sleep(stripAfterMs);
    await Promise.all(
      [...ctx.model.sandboxes.keys()].map(async (name) => {
        // A strip that lost a race (the object changed under its test) tries again; gone is done.
        for (let attempt = 0; attempt < 3; attempt++) {
          const outcome = await stripSandboxFinalizer(
            ctx,
            name,
            `administrator strips the finalizer of ${name} in the terminating namespace`,
          );
          if (outcome === 'ok' || outcome === 'HTTP 404' || outcome.startsWith('skipped')) return;
        }
      }),
    );
  }
  const exists = async () => {
    try {
      await clients.core.readNamespace({ name: ctx.namespace });
      return true;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return false;
      throw error;
    }
  };
  const gone = await until(op.startedAt + env.bounds.namespaceMs, async () => !(await exists()));
  if (gone === undefined) {
    const left = await leftovers(clients, ctx.namespace);
    violations.push({
      invariant: 'clean-namespace',
      signature: 'clean-namespace/stuck',
      message: `namespace ${ctx.namespace} not gone ${env.bounds.namespaceMs} ms after its DELETE; left: ${left.join(', ')}`,
    });
    await forceClean(ctx);
    return undefined;
  }
  env.tail.markGone(ctx.namespace, gone);
  const left = await leftovers(clients, ctx.namespace);
  if (left.length > 0)
    violations.push({
      invariant: 'clean-namespace',
      signature: 'clean-namespace/leftovers',
      message: `after namespace ${ctx.namespace} was gone: ${left.join(', ')}`,
    });
  return gone - op.startedAt;
}

async function leftovers(clients: ActorClients, namespace: string): Promise<string[]> {
  const selector = { fieldSelector: `metadata.namespace=${namespace}` };
  const custom = (plural: string) =>
    clients.custom.listCustomObjectForAllNamespaces({
      group: GROUP,
      version: VERSION,
      resourcePlural: plural,
      ...selector,
    }) as Promise<{ items: { metadata?: { name?: string; finalizers?: string[] } }[] }>;
  const [pods, budgets, boxes, refs, claims, sandboxClaims, pools] = await Promise.all([
    clients.core.listPodForAllNamespaces(selector),
    clients.policy.listPodDisruptionBudgetForAllNamespaces(selector),
    clients.custom.listCustomObjectForAllNamespaces({
      group: GROUP,
      version: VERSION,
      resourcePlural: SANDBOX.plural,
      ...selector,
    }),
    clients.custom.listCustomObjectForAllNamespaces({
      group: GROUP,
      version: VERSION,
      resourcePlural: SESSION_REFERENCE.plural,
      ...selector,
    }),
    clients.core.listPersistentVolumeClaimForAllNamespaces(selector),
    custom(SANDBOX_CLAIM.plural),
    custom(SANDBOX_WARM_POOL.plural),
  ]);
  const names = (kind: string, items: readonly { metadata?: { name?: string; finalizers?: string[] } }[]) =>
    items.map(
      (i) =>
        `${kind} ${i.metadata?.name ?? '?'} (finalizers ${JSON.stringify(i.metadata?.finalizers ?? [])})`,
    );
  return [
    ...names('pod', pods.items),
    ...names('pdb', budgets.items),
    ...names('sandbox', (boxes as { items: { metadata?: { name?: string } }[] }).items),
    ...names('sessionreference', (refs as { items: { metadata?: { name?: string } }[] }).items),
    ...names('persistentvolumeclaim', claims.items),
    ...names('sandboxclaim', sandboxClaims.items),
    ...names('sandboxwarmpool', pools.items),
  ];
}

/** After a stuck namespace is recorded: drop every finalizer so the next sequences do not pay for it. */
async function forceClean(ctx: SequenceContext): Promise<void> {
  const op = ctx.model.begin('harness', 'force-clean a stuck namespace');
  const clients = actorClients(ctx.connections, op.userAgent);
  const merge = { metadata: { finalizers: null } };
  const asMerge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  for (const pod of (await clients.core.listNamespacedPod({ namespace: ctx.namespace })).items)
    await clients.core
      .patchNamespacedPod({ namespace: ctx.namespace, name: pod.metadata?.name ?? '', body: merge }, asMerge)
      .catch(() => undefined);
  // A workspace claim's finalizer goes only under the administrator's override (claim protection).
  const overridden = {
    metadata: { finalizers: null, annotations: { [ANNOTATIONS.deletionOverride]: 'soak force-clean' } },
  };
  for (const claim of (await clients.core.listNamespacedPersistentVolumeClaim({ namespace: ctx.namespace }))
    .items)
    await clients.core
      .patchNamespacedPersistentVolumeClaim(
        { namespace: ctx.namespace, name: claim.metadata?.name ?? '', body: overridden },
        asMerge,
      )
      .catch(() => undefined);
  const claimsOf = { ...sandboxes(ctx.namespace), plural: SANDBOX_CLAIM.plural };
  const sandboxClaims = (await clients.custom.listNamespacedCustomObject(claimsOf)) as {
    items: { metadata: { name: string } }[];
  };
  for (const claim of sandboxClaims.items)
    await clients.custom
      .patchNamespacedCustomObject({ ...claimsOf, name: claim.metadata.name, body: merge }, asMerge)
      .catch(() => undefined);
  const list = (await clients.custom.listNamespacedCustomObject(sandboxes(ctx.namespace))) as {
    items: { metadata: { name: string } }[];
  };
  for (const box of list.items)
    await clients.custom
      .patchNamespacedCustomObject(
        { ...sandboxes(ctx.namespace), name: box.metadata.name, body: merge },
        asMerge,
      )
      .catch(() => undefined);
  ctx.model.end(op, 'ok');
}

export async function runSequence(
  env: SoakEnv,
  setup: Setup,
  commands: Iterable<fc.AsyncCommand<SoakModel, SequenceContext>>,
): Promise<SequenceResult> {
  const startedAt = Date.now();
  const namespace = `soak-${env.runTag}-${env.next()}`;
  env.tail.watch(namespace);
  const model = new SoakModel(namespace, setup.sessions, setup.sandboxes);
  const ctx: SequenceContext = { model, connections: env.connections, namespace };
  const violations: Violation[] = [];
  const releaseMs: number[] = [];
  await createAll(ctx, setup);
  await fc.asyncModelRun(() => ({ model, real: ctx }), commands);
  await settle(ctx, env, violations, releaseMs);
  violations.push(...(await checkIsolation(ctx, env.bounds.releaseMs)));
  if (setup.pool !== undefined) await settleClaims(ctx, env.bounds.releaseMs, violations);
  const namespaceMs = await teardown(ctx, env, violations, setup.stripAfterNamespaceDeleteMs);
  await deleteSequenceNodes(actorClients(env.connections, `soak/${namespace}/nodes`), namespace);
  await sleep(1_000); // the audit log is written as requests complete; let the last lines land
  const events = await env.tail.take(namespace);
  violations.push(...checkSequence(model, events, env.operatorUser, env.losses(namespace)));
  return {
    namespace,
    operations: model.ops.filter((op) => op.kind !== 'harness').length,
    violations,
    startedAt,
    endedAt: Date.now(),
    trace: model.ops.map(
      (op) =>
        `#${op.id} +${op.startedAt - startedAt}ms ${op.detail} -> ${op.outcome} (${op.endedAt - op.startedAt} ms)`,
    ),
    releaseMs,
    namespaceMs,
    coverage: coverageOf(model, events, env.operatorUser),
  };
}
