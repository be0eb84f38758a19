/**
 * What the controller keeps of a sandbox's PodDisruptionBudget, the guard against evictions (the eviction API
 * skips DELETE admission): enough to tell whether it still guards every pod of the sandbox.
 */
import { LABELS } from '../../api/names.ts';

export type BudgetSummary = {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly sandbox: string;
  /** Whether it still refuses every eviction of the sandbox's pods: maxUnavailable 0 over exactly its label, unowned. */
  readonly guards: boolean;
  readonly deleting: boolean;
};

type RawBudget = {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    ownerReferences?: unknown[];
    labels?: Record<string, string>;
    deletionTimestamp?: unknown;
  };
  spec?: {
    maxUnavailable?: unknown;
    minAvailable?: unknown;
    selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
  };
};

/** The budget's name for a sandbox: one per sandbox, so a missing or altered one is found by name. */
export const disruptionBudgetName = (sandbox: string) => `${sandbox}-sandbox`;

/** Undefined for anything that is not the budget of the sandbox its label names. */
export function budgetSummaryOf(raw: unknown): BudgetSummary | undefined {
  const budget = raw as RawBudget | null;
  const meta = budget?.metadata;
  const sandbox = meta?.labels?.[LABELS.sandbox];
  if (!meta?.name || !meta.namespace || !sandbox || meta.name !== disruptionBudgetName(sandbox))
    return undefined;
  const selector = budget?.spec?.selector;
  const matchLabels = Object.entries(selector?.matchLabels ?? {});
  // No owner: a foreground cascade of the Sandbox would delete an owned budget first (and again after each
  // re-creation); the operator deletes it itself once the pods are released.
  const guards =
    (meta.ownerReferences ?? []).length === 0 &&
    (budget?.spec?.maxUnavailable === 0 || budget?.spec?.maxUnavailable === '0%') &&
    budget.spec.minAvailable === undefined &&
    (selector?.matchExpressions ?? []).length === 0 &&
    matchLabels.length === 1 &&
    matchLabels[0]?.[0] === LABELS.sandbox &&
    matchLabels[0][1] === sandbox;
  return {
    namespace: meta.namespace,
    name: meta.name,
    uid: meta.uid ?? '',
    sandbox,
    guards,
    deleting: meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
  };
}
