/**
 * Pure: whether a live sandbox runs or is suspended (issue 27, docs/operations.md "Suspend and resume"), and
 * when its idle clock runs out. Two things suspend it: its spec (`operatingMode: Suspended`), and idleness by
 * references (`spec.idle`): no SessionReference Attached — only tombstones, or none — for
 * `suspendAfterSeconds` (with `whenNoTurnRunning`, none whose session has a turn Running either). An attach
 * resumes an idle sandbox by itself: its reference is Attached (with `whenNoTurnRunning`, a turn that starts).
 *
 * The idle clock reads only the reference index the controller holds, never a lookup per session. It does not
 * run while an overflowed index cannot be counted (fail closed: the sandbox keeps running), nor while the spec
 * suspends the sandbox, so a sandbox resumed by hand runs for `suspendAfterSeconds` before idleness counts.
 */
import type { SandboxState } from '../api/objects.ts';
import type { IdlePolicy } from '../api/suspension.ts';
import type { ReferenceEntry } from '../exclusivity/reference.ts';
import type { ReferenceIndex } from '../exclusivity/reference-index.ts';
import { rfc3339 } from './conditions.ts';
import { waitsInPool } from './pool-exemption.ts';

export type Suspension =
  | {
      readonly kind: 'Running';
      /** `status.idleSince` as it should be now; undefined while a reference is attached. */
      readonly idleSince: string | undefined;
      /** When the idle clock runs out, counted from now; undefined when it does not run. */
      readonly idleInMs: number | undefined;
    }
  | { readonly kind: 'Suspended'; readonly reason: 'Requested'; readonly idleSince: undefined }
  | {
      readonly kind: 'Suspended';
      readonly reason: 'Idle';
      readonly idleSince: string;
      readonly afterSeconds: number;
      /** `whenNoTurnRunning`: idle counted from the last turn that ran, not the last attach. */
      readonly byTurns: boolean;
    };

/**
 * A reference that keeps its sandbox from being idle: Attached, and with `whenNoTurnRunning` its session's
 * turn Running too.
 */
export const keepsAwake = (
  entry: Pick<ReferenceEntry, 'state' | 'turnRunning'>,
  idle: Pick<IdlePolicy, 'whenNoTurnRunning'>,
): boolean => entry.state === 'Attached' && (idle.whenNoTurnRunning !== true || entry.turnRunning === true);

export function judgeSuspension(sandbox: SandboxState, index: ReferenceIndex, now: Date): Suspension {
  const { operatingMode, idle } = sandbox.spec;
  if (operatingMode === 'Suspended') return { kind: 'Suspended', reason: 'Requested', idleSince: undefined };
  if (
    idle === undefined ||
    index.overflowed ||
    waitsInPool(sandbox.metadata) ||
    index.entries.some((entry) => keepsAwake(entry, idle))
  )
    return { kind: 'Running', idleSince: undefined, idleInMs: undefined };
  const since = sandbox.status?.idleSince ?? rfc3339(now);
  const idleInMs = Date.parse(since) + idle.suspendAfterSeconds * 1000 - now.getTime();
  return idleInMs <= 0
    ? {
        kind: 'Suspended',
        reason: 'Idle',
        idleSince: since,
        afterSeconds: idle.suspendAfterSeconds,
        byTurns: idle.whenNoTurnRunning === true,
      }
    : { kind: 'Running', idleSince: since, idleInMs };
}

/** The `Suspended` condition's message: why, and what resumes it. */
export function suspendedMessage(
  suspension: Extract<Suspension, { kind: 'Suspended' }>,
  podsLeft: number,
): string {
  const stopping = podsLeft === 0 ? 'its pods are stopped' : `${podsLeft} of its pods still stopping`;
  if (suspension.reason === 'Requested')
    return `spec.operatingMode is Suspended; ${stopping}; set it to Running to resume`;
  const idle = suspension.byTurns
    ? 'no attached session with a turn Running'
    : 'no SessionReference Attached';
  const resumes = suspension.byTurns ? 'a turn that starts resumes it' : 'an attach resumes it';
  return (
    `${idle} since ${suspension.idleSince} (spec.idle.suspendAfterSeconds ` +
    `${suspension.afterSeconds}); ${stopping}; ${resumes}`
  );
}
