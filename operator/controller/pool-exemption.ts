/**
 * Pure: an unclaimed warm pool sandbox waits for a sandbox claim (docs/warm-pools.md). It is unreferenced by
 * definition, so neither automatic cleanup (DeleteWhenUnreferenced's TTL) nor idle suspension counts while it
 * waits: their clocks start when a claim binds it. Only its pool deletes it, when the pool shrinks or replaces
 * it. A claimed one (the sandbox-claim label) is an ordinary sandbox from then on.
 */
import { LABELS } from '../api/names.ts';

export const waitsInPool = (metadata: {
  readonly labels?: Readonly<Record<string, string>> | undefined;
}): boolean =>
  metadata.labels?.[LABELS.warmPool] !== undefined && metadata.labels[LABELS.sandboxClaim] === undefined;
