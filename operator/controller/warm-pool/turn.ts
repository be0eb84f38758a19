/**
 * A warm pool's turn (docs/warm-pools.md): read the pool, its template and its sandboxes from the cache, plan
 * (plan.ts), delete with uid + resourceVersion preconditions (a binding that changed the sandbox since wins),
 * make the missing sandboxes from the template read live, and write the status. Claimed sandboxes are never
 * planned for, so never touched.
 */
import type { Logger } from 'pino';
import { awaitChange, requeueAfter, type Action } from '../../runtime/action.ts';
import type { PoolSandboxRecord, WarmPoolCache } from '../cache/warm-pools.ts';
import type { Expectations } from './expectations.ts';
import { planPool, type Doomed, type PoolCounts } from './plan.ts';
import { poolSandbox, poolSandboxName } from './pool-sandbox.ts';
import { poolStatus, statusChanged } from './pool-status.ts';
import type { WarmPoolApi } from './ports.ts';

/** What a turn reports, for the pool metrics (wiring/warm-pool-metrics.ts). */
export type WarmPoolObserver = {
  readonly onCounts?: (pool: string, desired: number, counts: PoolCounts) => void;
  readonly onForget?: (pool: string) => void;
  readonly onReplenish?: (pool: string, made: number) => void;
};

export type WarmPoolContext = {
  readonly cache: Pick<WarmPoolCache, 'pool' | 'template' | 'sandboxesOf'>;
  readonly api: WarmPoolApi;
  readonly expectations: Expectations;
  readonly now: () => Date;
  readonly random: () => number;
  readonly observer: WarmPoolObserver;
  /** Sandboxes one turn makes at most; the turn comes back at once for the rest. */
  readonly createsPerTurn: number;
};

/** Writes of one turn run this many at a time. */
const PARALLEL_WRITES = 16;
/** After a delete refused as stale (a binding changed the sandbox), the cache soon shows why. */
const CHANGED_RECHECK_MS = 1_000;

export async function reconcileWarmPool(ctx: WarmPoolContext, key: string, log: Logger): Promise<Action> {
  const record = ctx.cache.pool(key);
  if (record === undefined) {
    ctx.expectations.forget(key);
    ctx.observer.onForget?.(key);
    return awaitChange();
  }
  if (!record.parsed.ok) {
    log.warn({ err: record.parsed.error }, 'the pool does not parse; it is left as it is');
    return awaitChange();
  }
  const pool = record.parsed.value;
  const { namespace, name, uid = '', generation = 0, deletionTimestamp } = pool.metadata;
  if (deletionTimestamp !== undefined) return awaitChange();
  const templateName = pool.spec.templateRef.name;
  const template = ctx.cache.template(namespace, templateName);
  const sandboxes = ctx.cache.sandboxesOf(key);
  const now = ctx.now();
  const seen = seenIn(sandboxes);
  const plan = planPool(
    { replicas: pool.spec.replicas, strategy: pool.spec.updateStrategy.type, template },
    sandboxes,
    {
      creating: ctx.expectations.creating(key, seen, now.getTime()),
      deleting: ctx.expectations.deleting(key, seen, now.getTime()),
    },
    ctx.createsPerTurn,
  );
  const deleted = await inBatches(plan.delete, async (doomed: Doomed) => {
    const outcome = await ctx.api.deleteSandbox(namespace, doomed.name, doomed);
    if (outcome === 'Deleted') ctx.expectations.expectDelete(key, doomed.name, now.getTime());
    log.info({ sandbox: doomed.name, reason: doomed.reason, outcome }, 'deleting an unclaimed pool sandbox');
    return outcome;
  });
  const made =
    plan.create > 0 ? await replenish(ctx, { namespace, name, uid }, templateName, plan.create, log) : 0;
  const found = made !== 'TemplateNotFound' && template !== undefined;
  const status = poolStatus(
    { name, generation, ...(pool.status ? { status: pool.status } : {}) },
    pool.spec.replicas,
    { name: templateName, found },
    plan.counts,
    now,
  );
  if (statusChanged(pool.status, status)) await ctx.api.patchStatus(namespace, name, uid, status);
  ctx.observer.onCounts?.(key, pool.spec.replicas, plan.counts);
  if (plan.more) return requeueAfter(0);
  return deleted.includes('Changed') ? requeueAfter(CHANGED_RECHECK_MS) : awaitChange();
}

/** Makes `count` sandboxes from the template read live; the number made, or that the template is gone. */
async function replenish(
  ctx: WarmPoolContext,
  pool: { readonly namespace: string; readonly name: string; readonly uid: string },
  templateName: string,
  count: number,
  log: Logger,
): Promise<number | 'TemplateNotFound'> {
  const template = await ctx.api.readTemplate(pool.namespace, templateName);
  if (template === undefined) return 'TemplateNotFound';
  const key = `${pool.namespace}/${pool.name}`;
  const names = Array.from({ length: count }, () => poolSandboxName(pool.name, ctx.random));
  const created = await inBatches(names, async (sandbox) => {
    ctx.expectations.expectCreate(key, sandbox, ctx.now().getTime());
    try {
      const made = await ctx.api.createSandbox(pool.namespace, poolSandbox(pool, template, sandbox));
      if (!made) ctx.expectations.withdrawCreate(key, sandbox); // a namesake exists: the next turn tries again
      return made;
    } catch (error) {
      ctx.expectations.withdrawCreate(key, sandbox);
      throw error;
    }
  });
  const made = created.filter(Boolean).length;
  ctx.observer.onReplenish?.(key, made);
  log.info(
    { made, wanted: count, template: templateName, generation: template.generation },
    'made unclaimed pool sandboxes',
  );
  return made;
}

function seenIn(sandboxes: readonly PoolSandboxRecord[]) {
  const byName = new Map(sandboxes.map((sandbox) => [sandbox.name, sandbox]));
  return (name: string): 'Absent' | 'Present' | 'Deleting' => {
    const sandbox = byName.get(name);
    if (sandbox === undefined) return 'Absent';
    return sandbox.deleting ? 'Deleting' : 'Present';
  };
}

async function inBatches<T, R>(items: readonly T[], write: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += PARALLEL_WRITES)
    results.push(...(await Promise.all(items.slice(start, start + PARALLEL_WRITES).map(write))));
  return results;
}
