/**
 * Condition bookkeeping in the metav1.Condition way: `lastTransitionTime` moves only when the status changes;
 * reason, message and observedGeneration always follow the latest observation.
 */
import type { Condition } from '../api/fields.ts';

export const CONDITION_TYPES = [
  'Ready',
  'Reconciling',
  'Stalled',
  'DeletionBlocked',
  'ReferencesReconciled',
  'CapacityExceeded',
  'Misconfigured',
  'DisruptionBlocked',
  'Suspended',
  'Disrupting',
] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

export type ConditionUpdate = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'> & {
  readonly type: ConditionType;
};

export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  now: Date,
  observedGeneration: number | undefined,
): Condition[] {
  const existing = conditions?.find((c) => c.type === update.type);
  const next: Condition = {
    ...update,
    lastTransitionTime:
      existing && existing.status === update.status ? existing.lastTransitionTime : rfc3339(now),
    ...(observedGeneration === undefined ? {} : { observedGeneration }),
  };
  const others = (conditions ?? []).filter((c) => c.type !== update.type);
  return [...others, next].sort((a, b) => order(a.type) - order(b.type));
}

const order = (type: string) => {
  const position = (CONDITION_TYPES as readonly string[]).indexOf(type);
  return position < 0 ? CONDITION_TYPES.length : position;
};

/** Kubernetes timestamps: RFC 3339 with second precision, as metav1.Time writes them. */
export const rfc3339 = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');
