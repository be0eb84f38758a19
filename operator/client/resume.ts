/**
 * Pure: what an attach does about a suspended sandbox (issue 27, docs/client.md "Attach to a suspended
 * sandbox"), and whether the sandbox it waits on is Ready. Read from the raw object, as the fence is (fence.ts):
 * a field this client does not know must not hide what these read.
 *
 * - Suspended by its spec (`spec.operatingMode: Suspended`): the attach resumes it, by a patch of
 *   `spec.operatingMode: Running` that tests the version it read.
 * - Suspended as idle (`spec.idle`): the attach's own Attached reference resumes it; nothing to write.
 * - Running: nothing to do.
 */
export type ResumeJudgement =
  | { readonly kind: 'Running' }
  | { readonly kind: 'Idle' }
  | { readonly kind: 'Resume'; readonly resourceVersion: string };

export type Readiness =
  | { readonly kind: 'Ready' }
  | { readonly kind: 'NotReady'; readonly seen: string }
  | { readonly kind: 'Deleting' }
  | { readonly kind: 'Gone' };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const field = (value: unknown, key: string): unknown => (isRecord(value) ? value[key] : undefined);
const conditionOf = (body: unknown, type: string): Record<string, unknown> | undefined => {
  const conditions = field(field(body, 'status'), 'conditions');
  if (!Array.isArray(conditions)) return undefined;
  return conditions.find((c): c is Record<string, unknown> => isRecord(c) && c['type'] === type);
};

export function judgeResume(body: unknown): ResumeJudgement {
  if (field(field(body, 'spec'), 'operatingMode') === 'Suspended') {
    const version = field(field(body, 'metadata'), 'resourceVersion');
    return { kind: 'Resume', resourceVersion: typeof version === 'string' ? version : '' };
  }
  return conditionOf(body, 'Suspended')?.['status'] === 'True' ? { kind: 'Idle' } : { kind: 'Running' };
}

/**
 * Ready: `Ready=True`, recorded for the sandbox's current generation (a resume by spec bumps it, so a Ready
 * written before the suspension never counts).
 */
export function judgeReadiness(body: unknown): Readiness {
  if (body === undefined) return { kind: 'Gone' };
  const metadata = field(body, 'metadata');
  if ((field(metadata, 'deletionTimestamp') ?? undefined) !== undefined) return { kind: 'Deleting' };
  const ready = conditionOf(body, 'Ready');
  const generation = field(metadata, 'generation');
  const observed = ready?.['observedGeneration'];
  const current = generation === undefined || observed === generation;
  if (ready?.['status'] === 'True' && current) return { kind: 'Ready' };
  const phase = field(field(body, 'status'), 'phase');
  const reason = ready?.['reason'];
  return {
    kind: 'NotReady',
    seen: `phase ${typeof phase === 'string' ? phase : 'unknown'}, Ready ${
      typeof reason === 'string' ? reason : 'not reported'
    }`,
  };
}
