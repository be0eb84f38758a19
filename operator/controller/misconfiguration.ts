/**
 * What the controller knows of each sandbox's misconfiguration (a 403, a shell reaper mode no namespace
 * level admits), so the one status writer can record it as the `Misconfigured` condition. The runner says a
 * misconfiguration once and tells this memory; a later successful turn tells it that it is resolved.
 *
 * The memory is this process's: after a restart a sandbox still marked Misconfigured is marked resolved by
 * its first status write and marked again by the turn that meets the refusal (said once per process).
 */
import type { Condition } from '../api/fields.ts';
import { MESSAGE_MAX } from '../api/limits.ts';
import type { Misconfiguration } from '../runtime/error-policy.ts';
import type { RunnerObserver } from '../runtime/runner.ts';
import type { ConditionUpdate } from './conditions.ts';

export type MisconfigurationState = Misconfiguration | 'Resolved' | undefined;

export class Misconfigurations {
  private readonly byKey = new Map<string, Misconfiguration | 'Resolved'>();

  record(key: string, misconfiguration: Misconfiguration): void {
    this.byKey.set(key, misconfiguration);
  }

  resolve(key: string): void {
    if (this.byKey.has(key)) this.byKey.set(key, 'Resolved');
  }

  /** The sandbox is gone: nothing is left to record. */
  forget(key: string): void {
    this.byKey.delete(key);
  }

  of(key: string): MisconfigurationState {
    return this.byKey.get(key);
  }
}

/** `fix:` ends the message, so a clipped message loses the least useful part first: the refusal's detail. */
export function misconfigurationMessage(misconfiguration: Misconfiguration): string {
  const fix = `; fix: ${misconfiguration.fix}`;
  const room = MESSAGE_MAX - fix.length;
  const refused =
    misconfiguration.refused.length > room
      ? `${misconfiguration.refused.slice(0, Math.max(0, room - 1))}…`
      : misconfiguration.refused;
  return `${refused}${fix}`.slice(0, MESSAGE_MAX);
}

/**
 * The `Misconfigured` condition to set, if any: True while a refusal is known, False once it is resolved
 * (or once a restarted operator has not met it yet); a sandbox that never had one gets none.
 */
export function misconfiguredCondition(
  state: MisconfigurationState,
  existing: readonly Condition[] | undefined,
): ConditionUpdate | undefined {
  if (state !== undefined && state !== 'Resolved')
    return {
      type: 'Misconfigured',
      status: 'True',
      reason: state.reason,
      message: misconfigurationMessage(state),
    };
  const had = existing?.find((c) => c.type === 'Misconfigured');
  if (had === undefined) return undefined;
  return { type: 'Misconfigured', status: 'False', reason: 'Resolved', message: '' };
}

/**
 * The runner's observer, telling this memory what the runner met (and keeping the other observer's calls).
 * An admission refusal gets the fix for this operator's own identity, when the start-up check knows it.
 */
export function observingMisconfigurations(
  observer: RunnerObserver,
  memory: Misconfigurations,
  identityFix: () => string | undefined,
): RunnerObserver {
  return {
    ...observer,
    onMisconfigured: (key, misconfiguration) => {
      const fix = misconfiguration.reason === 'AdmissionRefused' ? identityFix() : undefined;
      const known =
        fix === undefined
          ? misconfiguration
          : { ...misconfiguration, fix: `${fix} (${misconfiguration.fix})` };
      memory.record(key, known);
      return known;
    },
    onReconfigured: (key) => memory.resolve(key),
  };
}
