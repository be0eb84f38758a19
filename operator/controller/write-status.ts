/** Computes the Sandbox status from the cache and what was decided, and writes only what changed. */
import type { Sandbox } from '../api/objects.ts';
import type { SandboxDecision } from '../api/sandbox.ts';
import type { ReferenceIndex } from '../index/reference-index.ts';
import type { ReconcilerContext } from './context.ts';
import { incarnationOf } from './incarnation.ts';
import type { ReconciliationStatus } from './lifecycle.ts';
import { unreferencedSince } from './lifecycle.ts';
import type { PodSummary } from './pod-summary.ts';
import { changedStatusFields, sandboxStatus } from './status.ts';

export type StatusFacts = {
  readonly index: ReferenceIndex;
  readonly reconciliation: ReconciliationStatus;
  readonly decision: SandboxDecision | undefined;
  readonly pods: readonly PodSummary[];
  /** The erase request just acted on, when this reconcile erased the index. */
  readonly erasedFor?: string | undefined;
  /** Top-level fields whose change alone is not worth a request; they are written with any other change. */
  readonly notAlone?: readonly string[];
};

export async function writeStatus(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
  facts: StatusFacts,
): Promise<void> {
  const now = ctx.now();
  const status = sandboxStatus({
    sandbox,
    ...facts,
    unreferencedSince: unreferencedSince(sandbox, facts.index, now),
    erasedFor: facts.erasedFor ?? sandbox.status?.capacity?.erasedFor,
    now,
  });
  const changed = changedStatusFields(sandbox.status, status);
  if (changed && facts.notAlone && Object.keys(changed).every((field) => facts.notAlone?.includes(field)))
    return;
  if (changed) await ctx.ports.sandboxes.patchStatus(incarnationOf(sandbox), sandbox.status, changed);
}
