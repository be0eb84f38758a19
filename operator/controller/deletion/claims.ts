/**
 * The release's claim steps (steps.ts `claimStep`): the workspace claims listed once the pods are gone, then
 * each deleted and freed of the finalizer (whenDeleted: Delete), or freed of finalizer and owner and kept
 * (Retain). Each write is bound to the claim as listed: its uid, or its version (claims.ts).
 */
import type { Logger } from 'pino';
import type { SandboxState } from '../../api/objects.ts';
import type { ReconcilerContext } from '../context.ts';
import { claimTemplatesOf, retentionOf, type RetentionPolicy } from '../../api/volume-claims.ts';
import type { DeletionFacts, DeletionStep } from './steps.ts';

type ClaimStep = Extract<DeletionStep, { kind: 'list-claims' | 'delete-claim' | 'release-claim' }>;

export const isClaimStep = (step: DeletionStep): step is ClaimStep =>
  step.kind === 'list-claims' || step.kind === 'delete-claim' || step.kind === 'release-claim';

/** The facts' `claims`: the retention policy of a sandbox with claim templates; undefined without. */
export const claimPolicy = (sandbox: SandboxState): RetentionPolicy | undefined =>
  claimTemplatesOf(sandbox.spec).length > 0 ? retentionOf(sandbox.spec) : undefined;

export async function performClaimStep(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  step: ClaimStep,
  facts: DeletionFacts,
  log: Logger,
): Promise<DeletionFacts> {
  const { namespace, name } = sandbox.metadata;
  switch (step.kind) {
    case 'list-claims':
      return { ...facts, liveClaims: await ctx.ports.claims.listLive(namespace, name) };
    case 'delete-claim':
      await ctx.ports.claims.delete(namespace, step.claim.name, step.claim.uid);
      ctx.failpoint(step.kind);
      log.info({ claim: step.claim.name }, 'workspace claim deleted (whenDeleted: Delete)');
      return { ...facts, claimDeleted: true };
    case 'release-claim': {
      await ctx.ports.claims.patchMetadata(namespace, step.claim.name, step.patch);
      ctx.failpoint(step.kind);
      if (step.retained)
        log.info({ claim: step.claim.name }, 'workspace claim released and kept (whenDeleted: Retain)');
      const { claimDeleted: _done, ...rest } = facts;
      return { ...rest, claimsHandled: step.index + 1 };
    }
  }
}
