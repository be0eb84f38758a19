/** Computes the Sandbox status from the cache and what was decided, and writes only what changed. */
import type { SandboxState } from '../api/objects.ts';
import type { SandboxDecision } from '../api/sandbox.ts';
import type { ReferenceIndex } from '../exclusivity/reference-index.ts';
import type { ReconcilerContext } from './context.ts';
import { incarnationOf } from './incarnation.ts';
import type { ReconciliationStatus } from './lifecycle.ts';
import { unreferencedSince } from './lifecycle.ts';
import type { PodSummary } from './cache/pod-summary.ts';
import { changedStatusFields, sandboxStatus } from './status.ts';
import { sandboxRef } from './erase.ts';
import { keyOf } from './cache/store.ts';

export type StatusFacts = {
  readonly index: ReferenceIndex;
  readonly reconciliation: ReconciliationStatus;
  readonly decision: SandboxDecision | undefined;
  readonly pods: readonly PodSummary[];
  /** The erase request just acted on, when this reconcile erased the index. */
  readonly erasedFor?: string | undefined;
  /** Top-level fields whose change alone is not worth a request; they are written with any other change. */
  readonly notAlone?: readonly string[];
  /**
   * Lands only on the Sandbox as read (its resourceVersion): a decision made on a cache that lags must not
   * overwrite one recorded meanwhile — an Exclusive decision is final (deletion/record.ts).
   */
  readonly asRead?: true;
};

export async function writeStatus(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  facts: StatusFacts,
): Promise<void> {
  const now = ctx.now();
  const misconfiguration = ctx.misconfigurations.of(keyOf(sandbox.metadata.namespace, sandbox.metadata.name));
  const status = sandboxStatus({
    sandbox,
    ...facts,
    unreferencedSince: unreferencedSince(sandbox, facts.index, now),
    erasedFor: facts.erasedFor ?? sandbox.status?.capacity?.erasedFor,
    misconfiguration,
    now,
  });
  const changed = changedStatusFields(sandbox.status, status);
  if (!changed) return;
  if (facts.notAlone && Object.keys(changed).every((field) => facts.notAlone?.includes(field))) return;
  const was = sandbox.status?.conditions?.find((c) => c.type === 'Misconfigured');
  const is = status.conditions?.find((c) => c.type === 'Misconfigured');
  // The Event follows the condition: once when a refusal is first recorded (or changes), not per turn. "First"
  // is judged on the Sandbox as read, so that write must land on that very version: a second turn on a cache
  // that has yet to see the first write would otherwise record it, and say it, again.
  const announces = is?.status === 'True' && (was?.status !== 'True' || was.message !== is.message);
  const readVersion = facts.asRead || announces ? (sandbox.metadata.resourceVersion ?? '') : undefined;
  await ctx.ports.sandboxes.patchStatus(incarnationOf(sandbox), sandbox.status, changed, readVersion);
  if (announces) ctx.ports.events.record(sandboxRef(sandbox), 'Warning', is.reason, is.message);
}
