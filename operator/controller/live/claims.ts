/**
 * The persistent workspace's claims in the live turn (issue 27): made before the pods, and their guards put
 * back on every turn, as the pods' are. One live read per claim and turn: the operator keeps no cache of
 * claims, so a claim a user stripped of its finalizer or label (an administrator's override) is found by the
 * next turn, at the latest the resync.
 */
import type { Logger } from 'pino';
import type { SandboxState } from '../../api/objects.ts';
import { claimName, claimTemplatesOf } from '../../api/volume-claims.ts';
import { KubeRequestError } from '../../kube/errors.ts';
import { MisconfigurationError } from '../../runtime/error-policy.ts';
import { judgeClaimHolder, sandboxClaim, type ClaimHolder } from '../claims.ts';
import type { ReconcilerContext } from '../context.ts';
import { sandboxRef } from '../erase.ts';

/** Ready: every claim stands, so pods may mount them. Waiting: one is going; its replacement comes later. */
export type ClaimsOutcome = 'Ready' | 'Waiting';

/** Ensures every claim of the sandbox; throws MisconfigurationError for a name someone else holds. */
export async function keepClaims(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  log: Logger,
): Promise<ClaimsOutcome> {
  const { namespace, name } = sandbox.metadata;
  let outcome: ClaimsOutcome = 'Ready';
  for (const template of claimTemplatesOf(sandbox.spec)) {
    const claim = claimName(template.metadata.name, name);
    let holder: ClaimHolder | undefined = await ctx.ports.claims.read(namespace, claim);
    if (holder === undefined) {
      let created: Awaited<ReturnType<typeof ctx.ports.claims.create>>;
      try {
        created = await ctx.ports.claims.create(sandboxClaim(sandbox.metadata, template));
      } catch (error) {
        if (!(error instanceof KubeRequestError && error.namespaceTerminating)) throw error;
        log.info({ claim }, 'namespace is terminating; no claim is created');
        return 'Waiting';
      }
      if (created === 'Created') {
        log.info({ claim }, 'workspace claim created');
        continue;
      }
      holder = created.taken;
    }
    if ((await keepClaim(ctx, sandbox, holder, log)) === 'Waiting') outcome = 'Waiting';
  }
  return outcome;
}

async function keepClaim(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  holder: ClaimHolder,
  log: Logger,
): Promise<ClaimsOutcome> {
  const { namespace } = sandbox.metadata;
  const judgement = judgeClaimHolder(sandbox.metadata, holder);
  switch (judgement.kind) {
    case 'Ours':
      if (judgement.repair) {
        await ctx.ports.claims.patchMetadata(namespace, holder.name, judgement.repair);
        log.warn(
          { claim: holder.name, label: holder.sandboxLabel ?? 'absent', finalizers: holder.finalizers },
          'a workspace claim lost its label or finalizer; re-established',
        );
      }
      return 'Ready';
    case 'Wait':
      if (judgement.release) {
        await ctx.ports.claims.patchMetadata(namespace, holder.name, judgement.release);
        log.warn({ claim: holder.name }, `${judgement.why}; released it of the finalizer`);
      } else log.info({ claim: holder.name }, judgement.why);
      return 'Waiting';
    case 'Adopt':
      await ctx.ports.claims.patchMetadata(namespace, holder.name, judgement.patch);
      log.warn({ claim: holder.name, uid: holder.uid }, judgement.why);
      ctx.ports.events.record(sandboxRef(sandbox), 'Normal', 'ClaimAdopted', judgement.why);
      return 'Ready';
    case 'Taken':
      throw new MisconfigurationError(judgement.misconfiguration, { cause: holder });
  }
}
