/**
 * The persistent workspace's claims (issue 27), pure: the PersistentVolumeClaim a template makes for a
 * sandbox, the volumes that mount them into its pods, who holds a claim name the operator needs, and the
 * patches that put a claim's guards back or release it.
 *
 * A claim is per sandbox, `<template>-<sandbox>` (not StatefulSet's per-pod `<template>-<pod>`): its pods are
 * compute that may be replaced, and the replacement mounts the same workspace. Like a sandbox pod it carries
 * the sandbox label, a controller owner reference to the Sandbox and the exclusivity finalizer from creation
 * on, and admission keeps them there (claim-protection.ts); the live turn puts back whatever is missing all
 * the same (an administrator's override, a restore).
 */
import type { V1PersistentVolumeClaim, V1Volume } from '@kubernetes/client-node';
import { API_VERSION, EXCLUSIVITY_FINALIZER, LABELS, MANAGED_BY, SANDBOX } from '../api/names.ts';
import type { ObjectMeta } from '../api/objects.ts';
import { claimName, type VolumeClaimTemplate } from '../api/volume-claims.ts';
import type { Misconfiguration } from '../runtime/error-policy.ts';
import { removeFinalizerFromIncarnation, type JsonPatchOp } from './finalizer.ts';

type SandboxMeta = Pick<ObjectMeta, 'name' | 'namespace' | 'uid'>;

/** The claim a template makes for a sandbox: the template's own labels under the operator's. */
export function sandboxClaim(sandbox: SandboxMeta, template: VolumeClaimTemplate): V1PersistentVolumeClaim {
  const { metadata, spec } = template;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(metadata.name, sandbox.name),
      namespace: sandbox.namespace,
      labels: { ...metadata.labels, [LABELS.sandbox]: sandbox.name, [LABELS.managedBy]: MANAGED_BY },
      ...(metadata.annotations ? { annotations: { ...metadata.annotations } } : {}),
      finalizers: [EXCLUSIVITY_FINALIZER],
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: SANDBOX.kind,
          name: sandbox.name,
          uid: sandbox.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: structuredClone(spec) as NonNullable<V1PersistentVolumeClaim['spec']>,
  };
}

/** The pod volumes that mount the sandbox's claims, one per template, named after it. */
export function claimVolumes(sandbox: string, templates: readonly VolumeClaimTemplate[]): V1Volume[] {
  return templates.map((template) => ({
    name: template.metadata.name,
    persistentVolumeClaim: { claimName: claimName(template.metadata.name, sandbox) },
  }));
}

/** A claim as read from the API server: what its judgement and its writes need. */
export type ClaimHolder = {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** Its `sandbox.agents.dev/sandbox` label, if any. */
  readonly sandboxLabel: string | undefined;
  /** Whether it has any labels at all (a label is added to the map, or the map is added). */
  readonly labelled: boolean;
  readonly controller: { readonly kind: string; readonly name: string; readonly uid: string } | undefined;
  readonly ownerReferences: readonly Readonly<Record<string, unknown>>[];
  readonly finalizers: readonly string[];
  readonly deleting: boolean;
};

export type ClaimJudgement =
  /** The sandbox's own claim; `repair` puts back a guard someone removed (label or finalizer). */
  | { readonly kind: 'Ours'; readonly repair?: readonly JsonPatchOp[] }
  /**
   * Gone soon (terminating, or an earlier incarnation's the garbage collector removes): no pod yet. `release`
   * frees one of ours being deleted of the finalizer: an administrator deleted it under the override, or the
   * garbage collector deletes an earlier incarnation's; nothing else would ever let it go.
   */
  | { readonly kind: 'Wait'; readonly why: string; readonly release?: readonly JsonPatchOp[] }
  /**
   * Labelled for this sandbox and owned by nothing: a claim an earlier incarnation retained, or a backup
   * restore's. The workspace is taken over as it is: owner reference and finalizer added.
   */
  | { readonly kind: 'Adopt'; readonly patch: readonly JsonPatchOp[]; readonly why: string }
  /** Someone else's claim: only a person can free the name. */
  | { readonly kind: 'Taken'; readonly misconfiguration: Misconfiguration };

const labelPath = `/metadata/labels/${LABELS.sandbox.replaceAll('~', '~0').replaceAll('/', '~1')}`;
const versionTest = (holder: ClaimHolder): JsonPatchOp => ({
  op: 'test',
  path: '/metadata/resourceVersion',
  value: holder.resourceVersion,
});

/**
 * The guards a claim lacks, as JSON Patch ops; none when it has them all. `add` on `/metadata/labels/<key>`
 * needs the labels map: a claim with no labels at all gets the map whole, one with others keeps them.
 */
function guardOps(sandbox: SandboxMeta, holder: ClaimHolder): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  if (holder.sandboxLabel !== sandbox.name)
    ops.push(
      holder.labelled
        ? { op: 'add', path: labelPath, value: sandbox.name }
        : { op: 'add', path: '/metadata/labels', value: { [LABELS.sandbox]: sandbox.name } },
    );
  if (!holder.finalizers.includes(EXCLUSIVITY_FINALIZER))
    ops.push({
      op: 'add',
      path: '/metadata/finalizers',
      value: [...holder.finalizers, EXCLUSIVITY_FINALIZER],
    });
  return ops;
}

/** The patch that puts a claim's guards back, bound to the version read (one changed since is judged again). */
const guardPatch = (
  sandbox: SandboxMeta,
  holder: ClaimHolder,
  extra: readonly JsonPatchOp[],
): JsonPatchOp[] => [versionTest(holder), ...extra, ...guardOps(sandbox, holder)];

export function judgeClaimHolder(sandbox: SandboxMeta, holder: ClaimHolder): ClaimJudgement {
  const { controller } = holder;
  if (controller?.kind === SANDBOX.kind && controller.name === sandbox.name) {
    const release = holder.deleting ? releasePatch(holder) : undefined;
    const freed = release ? { release } : {};
    if (controller.uid !== sandbox.uid)
      return {
        kind: 'Wait',
        why: `claim ${holder.name} belongs to an earlier Sandbox ${sandbox.name}; it is released or removed first`,
        ...freed,
      };
    if (holder.deleting)
      return {
        kind: 'Wait',
        why: `claim ${holder.name} is being deleted; it is made again once gone`,
        ...freed,
      };
    return guardOps(sandbox, holder).length === 0
      ? { kind: 'Ours' }
      : { kind: 'Ours', repair: guardPatch(sandbox, holder, []) };
  }
  if (holder.deleting)
    return { kind: 'Wait', why: `claim ${holder.name} is being deleted; it is made again once gone` };
  if (controller === undefined && holder.sandboxLabel === sandbox.name) {
    const owner = {
      apiVersion: API_VERSION,
      kind: SANDBOX.kind,
      name: sandbox.name,
      uid: sandbox.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    };
    return {
      kind: 'Adopt',
      patch: guardPatch(sandbox, holder, [
        { op: 'add', path: '/metadata/ownerReferences', value: [...holder.ownerReferences, owner] },
      ]),
      why:
        `claim ${holder.name} carries this sandbox's label and no controller (retained by an earlier sandbox of ` +
        `this name, or restored from a backup): the sandbox takes it over with its workspace`,
    };
  }
  const holderIs =
    controller === undefined ? 'owned by nothing' : `controlled by ${controller.kind} ${controller.name}`;
  return {
    kind: 'Taken',
    misconfiguration: {
      reason: 'ClaimNameTaken',
      refused: `persistentvolumeclaim ${holder.name}, the sandbox's workspace claim, is held by a claim that is not this sandbox's (${holderIs}, label ${
        holder.sandboxLabel === undefined ? 'absent' : holder.sandboxLabel
      }); no pod is created without its workspace`,
      fix:
        `delete or rename persistentvolumeclaim ${holder.name}, or label it ${LABELS.sandbox}=${sandbox.name} ` +
        `and remove its controller owner reference for the sandbox to take it over`,
    },
  };
}

/**
 * Retain: the claim freed and kept — the exclusivity finalizer and the Sandbox's owner references removed, so
 * neither the finalizer nor the garbage collector holds or deletes it once the Sandbox is gone. Bound to the
 * version read. Undefined when it holds neither.
 */
export function retainPatch(holder: ClaimHolder): JsonPatchOp[] | undefined {
  const owners = holder.ownerReferences.filter((owner) => owner['kind'] !== SANDBOX.kind);
  const finalizers = holder.finalizers.filter((each) => each !== EXCLUSIVITY_FINALIZER);
  const ownersChange = owners.length !== holder.ownerReferences.length;
  const finalizersChange = finalizers.length !== holder.finalizers.length;
  if (!ownersChange && !finalizersChange) return undefined;
  return [
    versionTest(holder),
    ...(ownersChange ? [{ op: 'add', path: '/metadata/ownerReferences', value: owners } as const] : []),
    ...(finalizersChange ? [{ op: 'add', path: '/metadata/finalizers', value: finalizers } as const] : []),
  ];
}

/**
 * Delete: after its delete, the claim freed of the finalizer, bound to the claim's uid and finalizer list as
 * read (its delete changed its version: a version test would fail on the operator's own write).
 */
export const releasePatch = (holder: ClaimHolder): JsonPatchOp[] | undefined =>
  removeFinalizerFromIncarnation(holder, EXCLUSIVITY_FINALIZER);

/**
 * Why a pod template cannot take the claims' volumes: a template volume of a claim template's name (the CRD
 * refuses such a Sandbox; one stored before that rule is refused here, never mounted over).
 */
export function volumeCollision(
  templates: readonly VolumeClaimTemplate[],
  podVolumes: readonly { readonly name?: unknown }[] | undefined,
): Misconfiguration | undefined {
  const names = new Set((podVolumes ?? []).map((volume) => volume.name));
  const clash = templates.find((template) => names.has(template.metadata.name));
  if (clash === undefined) return undefined;
  return {
    reason: 'VolumeNameCollision',
    refused: `no pod is created: spec.volumeClaimTemplates names ${clash.metadata.name}, which spec.podTemplate.spec.volumes already uses`,
    fix: `rename the pod template volume ${clash.metadata.name}: the claim is mounted as a volume of that name`,
  };
}
