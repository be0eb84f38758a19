/**
 * A Sandbox's persistent workspace (issue 27, "Persistent workspace"): `spec.volumeClaimTemplates`, the
 * StatefulSet and agent-sandbox shape, and `spec.persistentVolumeClaimRetentionPolicy`. The operator creates
 * one PersistentVolumeClaim per template per sandbox, named `<template>-<sandbox>` (claimName below), before
 * the pods, and mounts it into every pod as a volume named after the template. A claim is per sandbox, not
 * per pod (StatefulSet's `<template>-<pod>`): the workspace must outlive the pod, which may be replaced.
 *
 * The claim spec is a small bounded structural schema of the PersistentVolumeClaimSpec fields a workspace
 * needs (access modes, size, class, volume mode); a field it does not name (selector, dataSource) is pruned,
 * or refused under strict field validation. The templates are immutable once the Sandbox exists: a claim
 * already made is never resized or re-classed behind the workspace's back.
 */
import { z } from 'zod';
import { objectName } from './fields.ts';
import { ANNOTATIONS_MAX, LABELS_MAX, MAP_KEY_MAX, MAP_VALUE_MAX } from './limits.ts';

/** At most this many claim templates: each is one PVC per sandbox, and a volume in every pod. */
export const VOLUME_CLAIM_TEMPLATES_MAX = 4;
/** A template names the pod volume, so it is a DNS label (63); the claim is `<template>-<sandbox>`. */
export const VOLUME_CLAIM_TEMPLATE_NAME_MAX = 63;
export const STORAGE_CLASS_NAME_MAX = 253;
/** A resource.Quantity as a string (`10Gi`, `500M`), with the API server's own pattern. */
const QUANTITY_PATTERN = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
const QUANTITY_MAX = 64;

export const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const;
export const RETENTION_POLICIES = ['Delete', 'Retain'] as const;
export type RetentionPolicy = (typeof RETENTION_POLICIES)[number];

const quantity = (description: string) =>
  z.string().min(1).max(QUANTITY_MAX).regex(new RegExp(QUANTITY_PATTERN)).describe(description);

const boundedMap = (description: string, max: number) =>
  z
    .record(z.string().min(1).max(MAP_KEY_MAX), z.string().max(MAP_VALUE_MAX))
    .refine((map) => Object.keys(map).length <= max, { message: `must have at most ${max} entries` })
    .meta({
      maxProperties: max,
      'x-kubernetes-validations': [
        {
          rule: `self.all(k, size(k) >= 1 && size(k) <= ${MAP_KEY_MAX})`,
          message: `every key must have 1 to ${MAP_KEY_MAX} characters`,
        },
      ],
    })
    .describe(description);

export const claimSpecSchema = z
  .object({
    accessModes: z
      .array(z.enum(ACCESS_MODES))
      .min(1)
      .max(ACCESS_MODES.length)
      .describe('Access modes of the volume (ReadWriteOnce for a workspace).'),
    resources: z
      .object({
        requests: z
          .object({ storage: quantity('The size the claim asks for, e.g. 10Gi.') })
          .describe('The storage the claim asks for.'),
        limits: z
          .object({ storage: quantity('The most storage the claim may use.').optional() })
          .optional()
          .describe('Storage limits.'),
      })
      .describe('Storage resources of the claim.'),
    storageClassName: z
      .string()
      .max(STORAGE_CLASS_NAME_MAX)
      .optional()
      .describe(
        "The StorageClass; absent: the cluster's default class; empty: no class (a pre-made volume).",
      ),
    volumeMode: z.enum(['Filesystem', 'Block']).optional().describe('Filesystem (the default) or Block.'),
    volumeAttributesClassName: z
      .string()
      .max(STORAGE_CLASS_NAME_MAX)
      .optional()
      .describe('The VolumeAttributesClass, if any.'),
  })
  .describe(
    'A core/v1 PersistentVolumeClaimSpec, bounded to the fields a workspace needs (others are pruned).',
  );

export const volumeClaimTemplateSchema = z
  .object({
    metadata: z
      .object({
        name: objectName(
          'The template name: the pod volume that mounts the claim, and the claim `<name>-<sandbox>`.',
          VOLUME_CLAIM_TEMPLATE_NAME_MAX,
        ),
        labels: boundedMap('Labels added to the claim.', LABELS_MAX).optional(),
        annotations: boundedMap('Annotations added to the claim.', ANNOTATIONS_MAX).optional(),
      })
      .describe("The claim's name and metadata."),
    spec: claimSpecSchema,
  })
  .describe('A PersistentVolumeClaim made once per sandbox, before its pods.');
export type VolumeClaimTemplate = z.infer<typeof volumeClaimTemplateSchema>;

const UNIQUE_TEMPLATE_NAMES_RULE = {
  rule: 'self.all(t, self.exists_one(u, u.metadata.name == t.metadata.name))',
  message: 'spec.volumeClaimTemplates: template names (metadata.name) must be unique',
} as const;

/**
 * The API server defaults the list to empty; the parser leaves it optional (absent reads as none), so a
 * Sandbox built in code needs no empty list. Template names are unique (they name pod volumes).
 */
const volumeClaimTemplatesList = (rules: readonly { rule: string; message: string }[], immutable: string) =>
  z
    .array(volumeClaimTemplateSchema)
    .max(VOLUME_CLAIM_TEMPLATES_MAX)
    .refine((templates) => new Set(templates.map((t) => t.metadata.name)).size === templates.length, {
      message: 'template names (metadata.name) must be unique',
    })
    .optional()
    .meta({
      default: [],
      'x-kubernetes-list-type': 'atomic',
      'x-kubernetes-validations': [...rules, UNIQUE_TEMPLATE_NAMES_RULE],
    })
    .describe(
      `Persistent volume claims made once per sandbox (at most ${VOLUME_CLAIM_TEMPLATES_MAX}), each named ` +
        '<template>-<sandbox>, created before the pods and mounted into each pod as a volume named after the ' +
        'template (containers add a volumeMount of that name). Kept until the exclusivity decision releases the ' +
        `sandbox.${immutable}`,
    );

/**
 * A Sandbox's: immutable (agent-sandbox's rule). As the API server defaults the list to empty,
 * `self == oldSelf` also refuses adding templates to a Sandbox that had none.
 */
export const volumeClaimTemplatesSchema = volumeClaimTemplatesList(
  [
    {
      rule: 'self == oldSelf',
      message: 'spec.volumeClaimTemplates is immutable: the claims are made when the sandbox is created',
    },
  ],
  ' Immutable.',
);

/** A SandboxTemplate's: it may change, as only sandboxes made after the change copy it (warm-pools.md). */
export const templateVolumeClaimTemplatesSchema = volumeClaimTemplatesList([], '');

export const retentionPolicySchema = z
  .object({
    whenDeleted: z
      .enum(RETENTION_POLICIES)
      .default('Delete')
      .describe(
        "Delete: the release deletes the sandbox's claims after its pods. Retain: the release frees them " +
          '(finalizer and owner reference removed) and keeps them, for a later restore.',
      ),
  })
  .optional()
  .meta({ default: {} })
  .describe('What the release of the sandbox does with its claims (absent: whenDeleted Delete).');

/** The templates of a spec (absent: none). */
export const claimTemplatesOf = (spec: {
  readonly volumeClaimTemplates?: readonly VolumeClaimTemplate[] | undefined;
}): readonly VolumeClaimTemplate[] => spec.volumeClaimTemplates ?? [];

/** What the release does with the claims (absent: Delete). */
export const retentionOf = (spec: {
  readonly persistentVolumeClaimRetentionPolicy?: { readonly whenDeleted?: RetentionPolicy } | undefined;
}): RetentionPolicy => spec.persistentVolumeClaimRetentionPolicy?.whenDeleted ?? 'Delete';

/**
 * A template name that a pod template volume already uses: the claim's volume would collide with it. A CEL
 * rule on the spec (sandbox.ts) refuses such a Sandbox; the pod builder checks again (pod-template.ts).
 */
export const VOLUME_NAME_COLLISION_RULE = {
  rule:
    '!has(self.podTemplate.spec.volumes) || self.volumeClaimTemplates.all(t, ' +
    '!self.podTemplate.spec.volumes.exists(v, v.name == t.metadata.name))',
  message:
    'spec.volumeClaimTemplates[].metadata.name must not be the name of a volume in spec.podTemplate.spec.volumes: ' +
    'the claim is mounted as a volume of that name',
} as const;

/** The claim a template makes for a sandbox: `<template>-<sandbox>` (at most 63 + 1 + 63 characters). */
export const claimName = (template: string, sandbox: string): string => `${template}-${sandbox}`;
