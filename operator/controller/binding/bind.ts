/**
 * The binding of one claim (docs/warm-pools.md, "Claims"), in the design's order of writes. Warm:
 * (1) the claim's SessionReference to the chosen ready unclaimed pool sandbox (a 409 compares the fixed fields
 *     as the client's attach does, reattach.ts);
 * (2) the JSON Patch on that sandbox (binding-patch.ts), which tests that it is still unclaimed and that neither
 *     fence is up: sent after the reference, it is the attach's consistent read of the fence, so a cleanup or an
 *     erase that fences later finds the reference. Lost (another claim won it, or it is being deleted or
 *     fenced), the reference this turn created is withdrawn (uid and resourceVersion preconditions) and another
 *     candidate tried.
 * Cold (no candidate left, or a templateRef claim), or taken up where an earlier turn stopped (a sandbox
 * already labelled with the claim): the sandbox, then the reference, then the fence as a consistent read of the
 * Sandbox judged as the client judges it (fence.ts); being deleted or fenced, the reference is withdrawn and
 * another sandbox bound.
 * The claim's status is the caller's, once this returns Bound.
 */
import type { Logger } from 'pino';
import { judgeFence } from '../../client/fence.ts';
import { judgeReattach } from '../../client/reattach.ts';
import { bindingPatch } from './binding-patch.ts';
import { coldSandboxBody, referenceBody, referenceSpecOf } from './bodies.ts';
import type { BindingCacheReader } from './cache.ts';
import { chooseWarmSandbox, poolOwnerIndex } from './choice.ts';
import type { Binding, Unbound } from './claim-status.ts';
import type { BindingPorts, StoredReference } from './ports.ts';
import { candidatesToSkip, type Reservations } from './reservations.ts';
import type { BindingSandbox, ClaimRecord, LaunchType } from './records.ts';

export type BindingContext = {
  readonly cache: BindingCacheReader;
  readonly ports: BindingPorts;
  readonly now: () => Date;
  /** A cold sandbox's name suffix: 5 lowercase alphanumerics. */
  readonly suffix: () => string;
  /** The pool sandboxes this process's turns are binding now: a concurrent turn chooses another. */
  readonly reservations: Reservations;
};

export type BindOutcome =
  | {
      readonly kind: 'Bound';
      readonly binding: Binding;
      readonly sandbox: BindingSandbox;
      readonly pool?: string;
    }
  | { readonly kind: 'Unbound'; readonly unbound: Unbound };

type Target = {
  readonly sandbox: BindingSandbox;
  readonly launchType: LaunchType;
  readonly pool?: string;
  /** Set when the binding patch landed after this reference: the fence is read (a warm binding). */
  readonly reference?: StoredReference;
};
type Attached = StoredReference & { readonly created: boolean };

/** Sandboxes a claim tries in one turn before it goes cold: each lost one was won by another claim. */
export const WARM_ATTEMPTS = 16;
/** Fenced sandboxes a claim withdraws from in one turn before it waits for the next. */
const FENCE_ROUNDS = 4;

/**
 * `fresh`: this turn added the claim's finalizer, so no earlier turn can have bound it (nothing is bound
 * before the finalizer stands), and the consistent LIST of sandboxes labelled with it is skipped.
 */
export async function bindClaim(
  ctx: BindingContext,
  claim: ClaimRecord,
  log: Logger,
  fresh = false,
): Promise<BindOutcome> {
  const tried = new Set<string>();
  for (let round = 0; round < FENCE_ROUNDS; round += 1) {
    const held = fresh && round === 0 ? undefined : await heldBy(ctx, claim, tried);
    const target = held ?? (await acquire(ctx, claim, tried, log));
    if ('reason' in target) return { kind: 'Unbound', unbound: target };
    const { sandbox, launchType } = target;
    const reference = target.reference ?? (await attachReference(ctx, claim, sandbox.name));
    if ('reason' in reference) return { kind: 'Unbound', unbound: reference };
    // A warm binding's patch, sent after the reference, tested the fence; anything else reads it now.
    const fence =
      target.reference !== undefined
        ? ({ kind: 'Open' } as const)
        : judgeFence(await ctx.ports.reads.readRaw(claim.namespace, sandbox.name));
    if (fence.kind === 'Open') {
      return {
        kind: 'Bound',
        binding: {
          sandbox: sandbox.name,
          reference: reference.name,
          launchType,
          boundAt: ctx
            .now()
            .toISOString()
            .replace(/\.\d{3}Z$/, 'Z'),
        },
        sandbox,
        ...(target.pool === undefined ? {} : { pool: target.pool }),
      };
    }
    const withdrawn = await ctx.ports.references.delete(claim.namespace, reference);
    log.info(
      { sandbox: sandbox.name, fence: fence.kind, reference: reference.name, withdrawn },
      'bound sandbox is being deleted or fenced: the reference is withdrawn and another sandbox bound',
    );
    tried.add(sandbox.name);
  }
  return {
    kind: 'Unbound',
    unbound: {
      reason: 'Binding',
      message: `every sandbox bound in this turn (${[...tried].join(', ')}) was being deleted; trying again`,
    },
  };
}

/** A live sandbox already labelled with this claim: an earlier turn's step 1 stands. */
async function heldBy(
  ctx: BindingContext,
  claim: ClaimRecord,
  tried: ReadonlySet<string>,
): Promise<Target | undefined> {
  const held = (await ctx.ports.sandboxes.listOfClaim(claim.namespace, claim.name))
    .filter((sandbox) => !sandbox.deleting && !sandbox.fenced && !tried.has(sandbox.name))
    .sort((a, b) => (a.creationTimestamp ?? '').localeCompare(b.creationTimestamp ?? ''));
  const first = held[0];
  if (first === undefined) return undefined;
  return {
    sandbox: first,
    launchType: first.pool === undefined ? 'Cold' : 'Warm',
    ...(first.pool === undefined ? {} : { pool: first.pool }),
  };
}

async function acquire(
  ctx: BindingContext,
  claim: ClaimRecord,
  tried: Set<string>,
  log: Logger,
): Promise<Target | Unbound> {
  const { warmPoolRef, templateRef } = claim.spec;
  if ((warmPoolRef === undefined) === (templateRef === undefined))
    return {
      reason: 'SpecInvalid',
      message: 'spec must name exactly one of warmPoolRef (a warm claim) and templateRef (a cold one)',
    };
  let templateName = templateRef?.name;
  let templateField = 'spec.templateRef.name';
  if (warmPoolRef !== undefined) {
    // The pool's identity from the cache, like its candidates: the binding's patch tests the candidate's
    // owner reference against this uid, so a stale one costs a retry, never a wrong binding. Read live only
    // when the cache has not seen the pool (just created, or missing: the claim then waits for its event).
    const pool =
      ctx.cache.pool(claim.namespace, warmPoolRef.name) ??
      (await ctx.ports.blueprints.readPool(claim.namespace, warmPoolRef.name));
    if (pool === undefined || pool.deleting)
      return {
        reason: 'WarmPoolNotFound',
        message: `spec.warmPoolRef.name: SandboxWarmPool ${claim.namespace}/${warmPoolRef.name} ${pool === undefined ? 'does not exist' : 'is being deleted'}`,
      };
    const warm = await bindWarm(ctx, claim, { name: warmPoolRef.name, uid: pool.uid }, tried, log);
    if (warm !== undefined) return { ...warm, launchType: 'Warm', pool: warmPoolRef.name };
    templateName = pool.templateName;
    templateField = `spec.templateRef.name of SandboxWarmPool ${warmPoolRef.name}`;
  }
  if (templateName === undefined)
    return { reason: 'TemplateNotFound', message: `${templateField} is not set` };
  const template = await ctx.ports.blueprints.readTemplate(claim.namespace, templateName);
  if (template === undefined)
    return {
      reason: 'TemplateNotFound',
      message: `${templateField}: SandboxTemplate ${claim.namespace}/${templateName} does not exist`,
    };
  const created = await ctx.ports.sandboxes.create(
    claim.namespace,
    coldSandboxBody(claim, templateName, template, ctx.suffix()),
  );
  if ('kind' in created)
    return { reason: 'Binding', message: 'the cold sandbox’s name was taken; trying another' };
  log.info(
    { sandbox: created.name, template: templateName },
    'no ready unclaimed pool sandbox: created a cold one',
  );
  return {
    sandbox: created,
    launchType: 'Cold',
    ...(warmPoolRef === undefined ? {} : { pool: warmPoolRef.name }),
  };
}

/**
 * Steps 1 and 2 on the candidates in turn; undefined when none is left (or every one was won by another claim,
 * or is being deleted or fenced).
 */
async function bindWarm(
  ctx: BindingContext,
  claim: ClaimRecord,
  pool: { readonly name: string; readonly uid: string },
  tried: Set<string>,
  log: Logger,
): Promise<{ readonly sandbox: BindingSandbox; readonly reference: StoredReference } | undefined> {
  for (let attempt = 0; attempt < WARM_ATTEMPTS; attempt += 1) {
    const chosen = chooseWarmSandbox(
      ctx.cache.poolSandboxes(claim.namespace, pool.name),
      pool,
      claim.uid,
      candidatesToSkip(tried, ctx.reservations, claim.namespace),
    );
    if (chosen === undefined) return undefined;
    tried.add(chosen.name);
    const release = ctx.reservations.reserve(claim.namespace, chosen.name);
    try {
      const reference = await attachReference(ctx, claim, chosen.name);
      if ('reason' in reference) {
        log.info({ sandbox: chosen.name, reason: reference.reason }, reference.message);
        continue;
      }
      const index = poolOwnerIndex(chosen, pool) ?? 0;
      const patch = bindingPatch({ uid: chosen.uid, poolOwner: { index, uid: pool.uid } }, claim.name);
      const written = await ctx.ports.sandboxes.bind(chosen, patch);
      if (!('kind' in written)) return { sandbox: written, reference };
      // Only the reference this turn made is withdrawn, and only as it made it: one found (an earlier turn's,
      // or a host's attach of the same session) or written since (a host's re-attach) stands — it can only
      // hold a sandbox, never release one — and the claim's release deletes its own.
      const withdrawn = reference.created && (await ctx.ports.references.delete(claim.namespace, reference));
      log.debug(
        { sandbox: chosen.name, outcome: written.kind, withdrawn },
        'pool sandbox taken, deleted or fenced since read: trying another',
      );
    } finally {
      release();
    }
  }
  return undefined;
}

/** The claim's reference, or why it cannot be (a reference of other fixed fields holds its name). */
async function attachReference(
  ctx: BindingContext,
  claim: ClaimRecord,
  sandbox: string,
): Promise<Attached | Unbound> {
  const body = referenceBody(claim, sandbox);
  const written = await ctx.ports.references.create(claim.namespace, body);
  if (written.kind === 'Created')
    return {
      name: body.metadata.name,
      uid: written.uid,
      resourceVersion: written.resourceVersion,
      raw: body,
      created: true,
    };
  const judgement = judgeReattach(referenceSpecOf(claim, sandbox), written.stored.raw);
  if (judgement.kind === 'Same') return { ...written.stored, created: false };
  const show = (value: string | null) => (value === null ? 'none' : JSON.stringify(value));
  return {
    reason: 'ReferenceConflict',
    message:
      `sessionreference ${claim.namespace}/${body.metadata.name} already exists with spec.${judgement.field} ` +
      `${show(judgement.found)}, not ${show(judgement.requested)} as this claim asks: it was not created for ` +
      'this session (choose another session id, or have an administrator remove it)',
  };
}
