/**
 * The deletion's one status write: the decision with the index it was made on, and an Event when the
 * verdict changed. Released and blocked deletions say here what was decided and why.
 */
import type { Logger } from 'pino';
import type { SandboxState } from '../../api/objects.ts';
import type { ReconcilerContext } from '../context.ts';
import type { Decided } from './steps.ts';
import { sandboxRef } from '../erase.ts';
import type { LegacyResult } from '../walk-lane/evidence.ts';
import { decisionOf } from '../status.ts';
import { keyOf } from '../cache/store.ts';
import { writeStatus } from '../write-status.ts';

const RELEASED_POD_COUNTS = ['pods', 'ready'] as const;

export async function recordDecision(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  decided: Decided & { readonly legacy: LegacyResult; readonly erasedFor: string | undefined },
  log: Logger,
): Promise<void> {
  const { index, legacy, verdict } = decided;
  const previous = sandbox.status?.decision;
  const changed = previous?.verdict !== verdict.verdict || previous.reason !== verdict.reason;
  const decision = changed ? decisionOf(verdict, ctx.now()) : previous;
  await writeStatus(ctx, sandbox, {
    index,
    reconciliation: legacy.reconciliation,
    decision,
    erasedFor: decided.erasedFor,
    pods: ctx.store.pods(keyOf(sandbox.metadata.namespace, sandbox.metadata.name)),
    // Decided on this Sandbox's cache: a turn whose cache missed an Exclusive decision (the Sandbox watch lags
    // the reference and pod watches) would otherwise decide again on a late reference and record Foreign over
    // it, the pods already released. Stale, the write fails; the retry starts from the watch's newer Sandbox.
    asRead: true,
    // Released: the pods are going and so is the Sandbox; their counts alone are a request per deletion
    // that nobody reads (issue 13).
    ...(!changed && verdict.verdict === 'Exclusive' ? { notAlone: RELEASED_POD_COUNTS } : {}),
  });
  if (!changed) return;
  if (verdict.verdict === 'Exclusive') {
    log.info(
      { verdict: verdict.verdict, evidence: verdict.evidence, reason: verdict.reason },
      'deletion is exclusive; releasing the sandbox',
    );
    ctx.ports.events.record(
      sandboxRef(sandbox),
      'Normal',
      'Releasing',
      `exclusive (${verdict.evidence}): ${verdict.reason}`,
    );
  } else {
    const blocking = verdict.verdict === 'Foreign' ? verdict.blockingReferences : [];
    log.info(
      { verdict: verdict.verdict, evidence: verdict.evidence, reason: verdict.reason, blocking },
      'deletion blocked; nothing is stopped',
    );
    ctx.ports.events.record(
      sandboxRef(sandbox),
      'Warning',
      'DeletionBlocked',
      `${verdict.verdict} (${verdict.evidence}): ${verdict.reason}${blocking.length > 0 ? `; blocking references: ${blocking.join(', ')}` : ''}`,
    );
  }
}
