/**
 * The blueprint of a sandbox: the fields a `Sandbox` and a `SandboxTemplate` share (pod template, workspace
 * claims, shell reaper, cleanup, idle, disruption, network) with their limits and CEL rules, in one place so
 * a template holds nothing a Sandbox would refuse. A pool's sandbox is born with a copy of its template's
 * blueprint (docs/warm-pools.md).
 */
import { z } from 'zod';
import { ANNOTATIONS } from './names.ts';
import {
  idleSchema,
  SUSPENSION_KEEPS_OR_WAIVES_WORKSPACE,
  SUSPENSION_RULES,
  workspaceSchema,
} from './suspension.ts';
import { networkSchema } from './network.ts';
import {
  ANNOTATIONS_MAX,
  DISRUPTION_HOLD_SECONDS_MAX,
  LABELS_MAX,
  MAP_KEY_MAX,
  MAP_VALUE_MAX,
  PODS_MAX,
  REAPER_GRACE_SECONDS_MAX,
  TTL_SECONDS_MAX,
} from './limits.ts';
import {
  retentionPolicySchema,
  templateVolumeClaimTemplatesSchema,
  VOLUME_NAME_COLLISION_RULE,
} from './volume-claims.ts';
import { objectName } from './fields.ts';

export const CLEANUP_POLICIES = ['Retain', 'DeleteWhenUnreferenced'] as const;
export const DISRUPTION_POLICIES = ['Reschedule', 'Block'] as const;
export type DisruptionPolicy = (typeof DISRUPTION_POLICIES)[number];

type Rule = { readonly rule: string; readonly message: string };

/**
 * A string map with bounded keys and values. The key bounds are a CEL rule too: the JSON Schema a CRD holds
 * has no `propertyNames`, and a key the parser refuses must be refused by the API server first.
 */
const stringMap = (description: string, max: number, rules: readonly Rule[] = []) =>
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
        ...rules,
      ],
    })
    .describe(description);

const containerSchema = z
  .looseObject({
    name: objectName('Name of the container (DNS label).', 63),
    image: z.string().min(1).max(1024).describe('Container image reference.'),
  })
  .meta({ 'x-kubernetes-preserve-unknown-fields': true })
  .describe('A core/v1 Container; the CRD holds its whole schema, bounded (pod-template-bounds.ts).');

/**
 * The deletion override must be set on a pod by someone entitled to it, never pre-set by a template for every
 * pod (issue 15): the CRD refuses it here (new writes only: a Sandbox stored before keeps parsing, and the
 * pod template drops the key), and admission refuses a pod created with it (admission.ts).
 */
const templateAnnotations = stringMap('Annotations added to every sandbox pod.', ANNOTATIONS_MAX, [
  {
    rule: `!('${ANNOTATIONS.deletionOverride}' in self)`,
    message: `must not contain ${ANNOTATIONS.deletionOverride}: an administrator sets the deletion override on a pod itself, never through the Sandbox's template`,
  },
]);

export const podTemplateSchema = z
  .object({
    metadata: z
      .object({
        labels: stringMap('Labels added to every sandbox pod.', LABELS_MAX).optional(),
        annotations: templateAnnotations.optional(),
      })
      .optional()
      .describe('Labels and annotations for the sandbox pods.'),
    spec: z
      .looseObject({
        containers: z.array(containerSchema).min(1).max(16).describe('The sandbox containers.'),
      })
      .meta({ 'x-kubernetes-preserve-unknown-fields': true })
      .describe(
        'A core/v1 PodSpec, bounded: a field no PodSpec has is pruned (refused under strict field validation), ' +
          'and strings, lists and maps have limits. The API server validates the whole spec again when the ' +
          'controller creates a pod.',
      ),
  })
  .describe('Template for the sandbox pods (a core/v1 PodTemplateSpec).');

export const cleanupSchema = z
  .object({
    policy: z
      .enum(CLEANUP_POLICIES)
      .default('Retain')
      .describe(
        'Retain keeps the sandbox until it is deleted. DeleteWhenUnreferenced makes the controller delete it ' +
          'once no SessionReference has remained for ttlSecondsAfterUnreferenced; the deletion still goes ' +
          'through the exclusivity decision.',
      ),
    ttlSecondsAfterUnreferenced: z
      .int32()
      .min(0)
      .max(TTL_SECONDS_MAX)
      .default(300)
      .describe('Seconds without any SessionReference before DeleteWhenUnreferenced deletes the sandbox.'),
  })
  .describe('Controller-driven automatic cleanup.');

export const shellReaperSchema = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        "Inject the shell reaper sidecar, which ends a subagent session's shell groups when its turn completes.",
      ),
    gracePeriodSeconds: z
      .int32()
      .min(1)
      .max(REAPER_GRACE_SECONDS_MAX)
      .default(5)
      .describe('Seconds between SIGTERM and SIGKILL when the reaper retires a shell group.'),
    mode: z
      .enum(['Auto', 'SameUser', 'Privileged'])
      .optional()
      .describe(
        "The sidecar's privilege (absent: Auto): SameUser runs it as the agent's pinned user (PodSecurity restricted); Privileged as root with KILL, SYS_PTRACE, DAC_OVERRIDE, CHOWN for agents that change UID, only in a namespace an administrator labelled sandbox.agents.dev/shell-reaper-privileged=allowed and PodSecurity privileged; Auto picks SameUser when the template pins runAsUser and runAsGroup, and never Privileged.",
      ),
  })
  .describe('The shell reaper sidecar.');

export const disruptionSchema = z
  .object({
    policy: z
      .enum(DISRUPTION_POLICIES)
      .optional()
      .describe(
        "What a node drain does to the sandbox's pods (absent: Reschedule when the sandbox has a persistent " +
          'workspace, Block otherwise). Reschedule: the eviction is refused while the operator marks the ' +
          'sandbox Disrupting, waits until no attached session has a turn Running (at most holdSeconds), then ' +
          'deletes the pod itself and creates its replacement, which the scheduler places on another node. ' +
          'Block: the eviction is refused until the sandbox is deleted or the drain is called off ' +
          '(DisruptionBlocked says so).',
      ),
    holdSeconds: z
      .int32()
      .min(0)
      .max(DISRUPTION_HOLD_SECONDS_MAX)
      .default(300)
      .describe('Reschedule: the longest the operator waits for Running turns to end before moving a pod.'),
  })
  .describe('What node drains do to the sandbox (issue 27).');

/**
 * The blueprint's fields, in the Sandbox's order. A Sandbox adds its worktree, provider and operating mode
 * and makes its workspace claims immutable (sandbox.ts); a template keeps them changeable.
 */
export const blueprintShape = {
  replicas: z.int32().min(1).max(PODS_MAX).default(1).describe('Number of sandbox pods.'),
  podTemplate: podTemplateSchema,
  cleanup: cleanupSchema.prefault({}),
  shellReaper: shellReaperSchema.prefault({}),
  workspace: workspaceSchema,
  idle: idleSchema.optional(),
  // The persistent workspace (volume-claims.ts).
  volumeClaimTemplates: templateVolumeClaimTemplatesSchema,
  persistentVolumeClaimRetentionPolicy: retentionPolicySchema,
  network: networkSchema.optional(),
  disruption: disruptionSchema.optional(),
};

/** The CEL rules over the blueprint's fields alone, which a Sandbox's spec and a template's both carry. */
export const BLUEPRINT_RULES = [
  SUSPENSION_RULES[1],
  {
    // A moved pod's replacement starts from an empty filesystem: only a workspace on claims moves with it.
    rule:
      "!has(self.disruption) || !has(self.disruption.policy) || self.disruption.policy != 'Reschedule' || " +
      SUSPENSION_KEEPS_OR_WAIVES_WORKSPACE,
    message:
      "spec.disruption.policy: Reschedule deletes the sandbox's pod on a drained node, and without " +
      'spec.volumeClaimTemplates its workspace lives in that pod: give it a persistent workspace, or set ' +
      'spec.workspace: Ephemeral to accept losing it',
  },
  VOLUME_NAME_COLLISION_RULE,
] as const;
