/**
 * The agent host actor: attach, re-attach, detach, forget and prune through operator/client, each an
 * operation of the model with its own user agent. Outcomes update the model as the product promises:
 * a refused attach changes nothing that was there, a prune removes exactly the worktree's tombstones.
 */
import { GROUP, SANDBOX, VERSION } from '../../operator/api/names.ts';
import { SandboxDeletingError } from '../../operator/client/session-references.ts';
import { sessionReferenceName } from '../../operator/client/names.ts';
import { actorClients, type Connections } from './kube.ts';
import type { OpRecord, SoakModel } from './model.ts';

export type SequenceContext = {
  readonly model: SoakModel;
  readonly connections: Connections;
  readonly namespace: string;
};

export function outcomeOf(error: unknown): string {
  const status = (error as { status?: unknown; code?: unknown }).status ?? (error as { code?: unknown }).code;
  return typeof status === 'number' ? `HTTP ${status}` : `error ${String(error).slice(0, 120)}`;
}

export async function attach(ctx: SequenceContext, session: string, sandbox: string): Promise<OpRecord> {
  const spec = ctx.model.session(session);
  const name = sessionReferenceName(sandbox, session);
  const op = ctx.model.begin('attach', `${session} -> ${sandbox}`, { reference: name, sandbox });
  const { references } = actorClients(ctx.connections, op.userAgent);
  try {
    await references.attach({
      namespace: ctx.namespace,
      sandbox,
      session,
      ...(spec.worktree === undefined ? {} : { worktree: spec.worktree }),
      route: `shared-control-v1/${session}/${op.id}`,
      role: spec.role,
      ...(spec.role === 'Subagent' ? { parentSession: 'workspace_parent' } : {}),
    });
    ctx.model.end(op, 'attached');
    ctx.model.attached(op, name, sandbox, spec);
  } catch (error) {
    if (error instanceof SandboxDeletingError) {
      ctx.model.end(op, 'refused: sandbox deleting or gone');
    } else {
      ctx.model.end(op, outcomeOf(error));
      ctx.model.unknown(name);
    }
  }
  return op;
}

export async function detach(ctx: SequenceContext, session: string, sandbox: string): Promise<void> {
  const name = sessionReferenceName(sandbox, session);
  const op = ctx.model.begin('detach', `${session} -x ${sandbox}`, { reference: name, sandbox });
  const { references } = actorClients(ctx.connections, op.userAgent);
  try {
    await references.detach(ctx.namespace, sandbox, session);
    ctx.model.end(op, 'detached');
    ctx.model.detached(name);
  } catch (error) {
    ctx.model.end(op, outcomeOf(error));
    // 404: nothing to detach (never attached, or erased with its released sandbox); else unknown.
    if (outcomeOf(error) !== 'HTTP 404') ctx.model.unknown(name);
  }
}

export async function forget(ctx: SequenceContext, session: string, sandbox: string): Promise<void> {
  const name = sessionReferenceName(sandbox, session);
  const op = ctx.model.begin('forget', `${session} forgets ${sandbox}`, { reference: name, sandbox });
  const { references } = actorClients(ctx.connections, op.userAgent);
  const result = await references.forget(ctx.namespace, sandbox, session, 5_000);
  ctx.model.end(op, result.kind);
  ctx.model.removing(op, name, result.kind !== 'Failed');
}

export async function prune(ctx: SequenceContext, worktree: string | undefined): Promise<string[]> {
  const op = ctx.model.begin('prune', `prune worktree ${worktree ?? 'none'}`, { worktree });
  if (worktree === undefined) {
    ctx.model.end(op, 'skipped: sessions without a worktree have no worktree to prune');
    return [];
  }
  // The tombstones may be gone from the prune's start on; a racing re-attach, applied after, re-opens one.
  const tombstones = ctx.model.tombstonesOf(worktree);
  for (const ref of tombstones) ctx.model.removing(op, ref.name, true);
  const { references } = actorClients(ctx.connections, op.userAgent);
  try {
    const names = await references.pruneWorktree(ctx.namespace, worktree);
    ctx.model.end(op, `pruned ${names.length}`);
    return names;
  } catch (error) {
    ctx.model.end(op, outcomeOf(error));
    for (const ref of tombstones) ctx.model.unknown(ref.name);
    return [];
  }
}

/** A re-attach racing a prune of its own tombstone's worktree (the attach starts `offsetMs` later). */
export async function reattachDuringPrune(
  ctx: SequenceContext,
  session: string,
  sandbox: string,
  offsetMs: number,
): Promise<void> {
  const worktree = ctx.model.session(session).worktree;
  const name = sessionReferenceName(sandbox, session);
  const ref = ctx.model.references.get(name);
  if (ref?.state !== 'Detached' || ref.presence.at(-1)?.until !== Infinity) {
    await attach(ctx, session, sandbox);
    await detach(ctx, session, sandbox);
  }
  const pruning = prune(ctx, worktree);
  await new Promise((resolve) => setTimeout(resolve, offsetMs));
  await Promise.all([pruning, attach(ctx, session, sandbox)]);
}

/**
 * An attach aimed at the moment automatic cleanup comes due (status.unreferencedSince + TTL, shifted by
 * `jitterMs`), to land between the cleanup's LIST and its DELETE.
 */
export async function attachAtCleanup(
  ctx: SequenceContext,
  session: string,
  sandbox: string,
  jitterMs: number,
): Promise<void> {
  const ttl = ctx.model.sandbox(sandbox).cleanupTtlSeconds;
  if (ttl !== undefined) {
    const op = ctx.model.begin(
      'pause',
      `wait for ${sandbox}'s cleanup TTL ${jitterMs >= 0 ? '+' : ''}${jitterMs} ms`,
    );
    const { custom } = actorClients(ctx.connections, op.userAgent);
    try {
      const live = (await custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: ctx.namespace,
        plural: SANDBOX.plural,
        name: sandbox,
      })) as { status?: { unreferencedSince?: string } };
      const since = live.status?.unreferencedSince;
      const due = since === undefined ? Date.now() : Date.parse(since) + ttl * 1000;
      const wait = Math.min(Math.max(due + jitterMs - Date.now(), 0), (ttl + 2) * 1000);
      await new Promise((resolve) => setTimeout(resolve, wait));
      ctx.model.end(op, `waited ${wait} ms`);
    } catch (error) {
      ctx.model.end(op, outcomeOf(error));
    }
  }
  await attach(ctx, session, sandbox);
}
