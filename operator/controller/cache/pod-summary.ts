/** What the controller keeps of a sandbox pod: identity, finalizers, deletion and readiness. */
import { EXCLUSIVITY_FINALIZER, GROUP, LABELS, SANDBOX } from '../../api/names.ts';

export type PodSummary = {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** The version read: a suspension's delete is preconditioned on it (a pod changed since is judged again). */
  readonly resourceVersion?: string | undefined;
  readonly sandbox: string;
  readonly ordinal: number | undefined;
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
  readonly ready: boolean;
  readonly phase: string | undefined;
  /** The node it was scheduled to (`spec.nodeName`), if any: a drain of that node is one the guard holds up. */
  readonly node: string | undefined;
};

/** Released by a deletion: being deleted, and free of our finalizer, so nothing of ours holds it any more. */
export const isReleased = (pod: PodSummary): boolean =>
  pod.deleting && !pod.finalizers.includes(EXCLUSIVITY_FINALIZER);

type RawPod = {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    ownerReferences?: { apiVersion?: string; kind?: string; name?: string }[];
    finalizers?: string[];
    deletionTimestamp?: unknown;
  };
  spec?: { nodeName?: string };
  status?: { phase?: string; conditions?: { type?: string; status?: string }[] };
};

/**
 * Undefined for anything that is not a sandbox pod: labelled with its sandbox and owned by that Sandbox. A
 * pod that only claims the label (label squatting, issue 15) is not the operator's to count or release.
 */
export function podSummaryOf(raw: unknown): PodSummary | undefined {
  const pod = raw as RawPod | null;
  const meta = pod?.metadata;
  const sandbox = meta?.labels?.[LABELS.sandbox];
  if (!meta?.name || !meta.namespace || !sandbox) return undefined;
  const owned = meta.ownerReferences?.some(
    (owner) =>
      owner.kind === SANDBOX.kind &&
      owner.name === sandbox &&
      (owner.apiVersion ?? '').startsWith(`${GROUP}/`),
  );
  if (owned !== true) return undefined;
  const ordinal = Number.parseInt(meta.labels?.[LABELS.podIndex] ?? '', 10);
  return {
    namespace: meta.namespace,
    name: meta.name,
    uid: meta.uid ?? '',
    resourceVersion: meta.resourceVersion,
    sandbox,
    ordinal: Number.isInteger(ordinal) ? ordinal : undefined,
    deleting: meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
    finalizers: meta.finalizers ?? [],
    ready: pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    phase: pod?.status?.phase,
    node: pod?.spec?.nodeName === '' ? undefined : pod?.spec?.nodeName,
  };
}
