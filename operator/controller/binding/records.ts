/**
 * What the binding keeps of a SandboxClaim and of a pool or claimed Sandbox, read from the raw object, pure.
 * Only the fields the binding decides on: a claim's spec and status, a sandbox's labels, owner, fences and
 * Ready condition. A field of the wrong type reads as absent, and a sandbox whose fence cannot be read reads
 * as fenced (it is then never chosen: a refused candidate costs a cold start, a wrong one the workspace).
 */
import { ANNOTATIONS, LABELS } from '../../api/names.ts';

export { LAUNCH_TYPES, type LaunchType } from '../../api/sandbox-claim.ts';
import type { LaunchType } from '../../api/sandbox-claim.ts';

export type ClaimCondition = {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration?: number;
};

export type ClaimSpec = {
  readonly warmPoolRef?: { readonly name: string };
  readonly templateRef?: { readonly name: string };
  readonly session: string;
  readonly worktree?: string;
  readonly route: string;
  readonly role: string;
  readonly parentSession?: string;
};

export type ClaimStatus = {
  readonly observedGeneration?: number;
  readonly sandbox?: string;
  readonly reference?: string;
  readonly launchType?: LaunchType;
  readonly boundAt?: string;
  readonly conditions?: readonly ClaimCondition[];
};

export type ClaimRecord = {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly generation: number;
  readonly creationTimestamp?: string;
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
  readonly spec: ClaimSpec;
  readonly status: ClaimStatus;
};

export type OwnerReference = {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller: boolean;
};

export type BindingSandbox = {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly creationTimestamp?: string;
  /** The `warm-pool` label: the pool that made it (kept after binding). */
  readonly pool?: string;
  /** The `sandbox-claim` label: the claim it is bound to. */
  readonly claim?: string;
  readonly template?: string;
  readonly owners: readonly OwnerReference[];
  readonly deleting: boolean;
  /** Automatic cleanup's fence is up, or the fence could not be read. */
  readonly fenced: boolean;
  readonly ready: { readonly status: string; readonly reason?: string; readonly message?: string };
};

/** What the binding keeps of a SandboxWarmPool: the identity its sandboxes' owner references carry. */
export type PoolRecord = {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly templateName: string | undefined;
  readonly deleting: boolean;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const record = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});
const named = (value: unknown): { readonly name: string } | undefined => {
  const name = text(record(value)['name']);
  return name === undefined ? undefined : { name };
};
const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;

function conditionsOf(value: unknown): ClaimCondition[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).flatMap((raw) => {
    const type = text(raw['type']);
    const status = text(raw['status']);
    if (type === undefined || (status !== 'True' && status !== 'False' && status !== 'Unknown')) return [];
    const generation = raw['observedGeneration'];
    return [
      {
        type,
        status,
        reason: text(raw['reason']) ?? '',
        message: text(raw['message']) ?? '',
        lastTransitionTime: text(raw['lastTransitionTime']) ?? '',
        ...(typeof generation === 'number' ? { observedGeneration: generation } : {}),
      },
    ];
  });
}

/** Undefined when the object has no name and namespace. */
export function claimRecordOf(raw: unknown): ClaimRecord | undefined {
  const metadata = record(record(raw)['metadata']);
  const name = text(metadata['name']);
  const namespace = text(metadata['namespace']);
  if (name === undefined || namespace === undefined) return undefined;
  const spec = record(record(raw)['spec']);
  const status = record(record(raw)['status']);
  const launchType = text(status['launchType']);
  const finalizers = metadata['finalizers'];
  const warmPoolRef = named(spec['warmPoolRef']);
  const templateRef = named(spec['templateRef']);
  const generation = metadata['generation'];
  return {
    namespace,
    name,
    uid: text(metadata['uid']) ?? '',
    resourceVersion: text(metadata['resourceVersion']) ?? '',
    generation: typeof generation === 'number' ? generation : 0,
    ...optional('creationTimestamp', text(metadata['creationTimestamp'])),
    deleting: metadata['deletionTimestamp'] !== undefined && metadata['deletionTimestamp'] !== null,
    finalizers: Array.isArray(finalizers) ? finalizers.filter((f) => typeof f === 'string') : [],
    spec: {
      ...(warmPoolRef ? { warmPoolRef } : {}),
      ...(templateRef ? { templateRef } : {}),
      session: text(spec['session']) ?? '',
      ...optional('worktree', text(spec['worktree'])),
      route: text(spec['route']) ?? '',
      role: text(spec['role']) ?? '',
      ...optional('parentSession', text(spec['parentSession'])),
    },
    status: {
      ...(typeof status['observedGeneration'] === 'number'
        ? { observedGeneration: status['observedGeneration'] }
        : {}),
      ...optional('sandbox', text(status['sandbox'])),
      ...optional('reference', text(status['reference'])),
      ...(launchType === 'Warm' || launchType === 'Cold' ? { launchType } : {}),
      ...optional('boundAt', text(status['boundAt'])),
      conditions: conditionsOf(status['conditions']),
    },
  };
}

function ownersOf(value: unknown): OwnerReference[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((owner) => ({
    apiVersion: text(owner['apiVersion']) ?? '',
    kind: text(owner['kind']) ?? '',
    name: text(owner['name']) ?? '',
    uid: text(owner['uid']) ?? '',
    controller: owner['controller'] === true,
  }));
}

/** Undefined when the object has no name and namespace. */
export function bindingSandboxOf(raw: unknown): BindingSandbox | undefined {
  const metadata = record(record(raw)['metadata']);
  const name = text(metadata['name']);
  const namespace = text(metadata['namespace']);
  if (name === undefined || namespace === undefined) return undefined;
  const labels = record(metadata['labels']);
  const annotations = metadata['annotations'] ?? undefined;
  const fence = isRecord(annotations) ? (annotations[ANNOTATIONS.cleanupFence] ?? undefined) : undefined;
  const ready = conditionsOf(record(record(raw)['status'])['conditions']).find((c) => c.type === 'Ready');
  return {
    namespace,
    name,
    uid: text(metadata['uid']) ?? '',
    resourceVersion: text(metadata['resourceVersion']) ?? '',
    ...optional('creationTimestamp', text(metadata['creationTimestamp'])),
    ...optional('pool', text(labels[LABELS.warmPool])),
    ...optional('claim', text(labels[LABELS.sandboxClaim])),
    ...optional('template', text(labels[LABELS.template])),
    owners: ownersOf(metadata['ownerReferences']),
    deleting: metadata['deletionTimestamp'] !== undefined && metadata['deletionTimestamp'] !== null,
    fenced: (annotations !== undefined && !isRecord(annotations)) || fence !== undefined,
    ready: ready
      ? { status: ready.status, reason: ready.reason, message: ready.message }
      : { status: 'Unknown', reason: 'NotObserved' },
  };
}

/** Undefined when the object has no name and namespace. */
export function poolRecordOf(raw: unknown): PoolRecord | undefined {
  const metadata = record(record(raw)['metadata']);
  const name = text(metadata['name']);
  const namespace = text(metadata['namespace']);
  if (name === undefined || namespace === undefined) return undefined;
  return {
    namespace,
    name,
    uid: text(metadata['uid']) ?? '',
    templateName: named(record(record(raw)['spec'])['templateRef'])?.name,
    deleting: metadata['deletionTimestamp'] !== undefined && metadata['deletionTimestamp'] !== null,
  };
}
