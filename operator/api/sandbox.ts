/** The `Sandbox` resource: a sandbox's pods, its cleanup policy, and the last exclusivity decision. */
import { z } from 'zod';
import { ANNOTATIONS } from './names.ts';
import {
  idleSchema,
  operatingModeSchema,
  SUSPENSION_KEEPS_OR_WAIVES_WORKSPACE,
  SUSPENSION_RULES,
  workspaceSchema,
} from './suspension.ts';
import { networkSchema } from './network.ts';
import { conditionsSchema, count, identifier, immutable, objectName, timestamp } from './fields.ts';
import {
  ANNOTATIONS_MAX,
  BLOCKING_REFERENCES_MAX,
  DISRUPTION_HOLD_SECONDS_MAX,
  LABELS_MAX,
  MAP_KEY_MAX,
  MAP_VALUE_MAX,
  MESSAGE_MAX,
  PODS_MAX,
  PROVIDER_MAX,
  REAPER_GRACE_SECONDS_MAX,
  TTL_SECONDS_MAX,
  WORKTREE_ID_MAX,
} from './limits.ts';
import {
  retentionPolicySchema,
  VOLUME_NAME_COLLISION_RULE,
  volumeClaimTemplatesSchema,
} from './volume-claims.ts';

export const VERDICTS = ['Exclusive', 'Foreign', 'Incomplete', 'Unavailable', 'Overflowed'] as const;
export type VerdictName = (typeof VERDICTS)[number];
export const EVIDENCE = ['Index', 'Ledger', 'Reconciliation'] as const;
export type Evidence = (typeof EVIDENCE)[number];
export const SANDBOX_PHASES = ['Pending', 'Running', 'Suspended', 'Terminating', 'Blocked'] as const;
export type SandboxPhase = (typeof SANDBOX_PHASES)[number];
export const CLEANUP_POLICIES = ['Retain', 'DeleteWhenUnreferenced'] as const;
export const DISRUPTION_POLICIES = ['Reschedule', 'Block'] as const;
export type DisruptionPolicy = (typeof DISRUPTION_POLICIES)[number];
/** The legacy walk's last outcome; `NotRequired` for sandboxes the operator created (born with the marker). */
export const RECONCILIATION_STATES = [
  'NotRequired',
  'Pending',
  'Complete',
  'Foreign',
  'Incomplete',
  'Unavailable',
  'NotConfigured',
] as const;
export type ReconciliationState = (typeof RECONCILIATION_STATES)[number];
export const CAPACITY_LIMITS = ['References', 'Bytes'] as const;

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
        "The sidecar's privilege (absent: Auto): SameUser runs it as the agent's pinned user (PodSecurity restricted); Privileged as root with KILL, SYS_PTRACE, DAC_READ_SEARCH, CHOWN for agents that change UID, only in a namespace an administrator labelled sandbox.agents.dev/shell-reaper-privileged=allowed and PodSecurity privileged; Auto picks SameUser when the template pins runAsUser and runAsGroup, and never Privileged.",
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

export const sandboxSpecSchema = z
  .object({
    worktree: immutable(
      identifier(
        "The worktree this sandbox's workspace belongs to; absent when it belongs to none.",
        WORKTREE_ID_MAX,
      ),
      'spec.worktree',
    ).optional(),
    provider: immutable(
      objectName('The runtime provider, matched against ledger allocations.', PROVIDER_MAX),
      'spec.provider',
    ).default('kubernetes'),
    replicas: z.int32().min(1).max(PODS_MAX).default(1).describe('Number of sandbox pods.'),
    podTemplate: podTemplateSchema,
    cleanup: cleanupSchema.prefault({}),
    shellReaper: shellReaperSchema.prefault({}),
    operatingMode: operatingModeSchema,
    workspace: workspaceSchema,
    idle: idleSchema.optional(),
    // The persistent workspace (volume-claims.ts).
    volumeClaimTemplates: volumeClaimTemplatesSchema,
    persistentVolumeClaimRetentionPolicy: retentionPolicySchema,
    network: networkSchema.optional(),
    disruption: disruptionSchema.optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'has(self.worktree) == has(oldSelf.worktree)',
        message: 'spec.worktree cannot be added or removed after creation',
      },
      ...SUSPENSION_RULES,
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
    ],
  })
  .describe('Desired state of the sandbox.');
export type SandboxSpec = z.infer<typeof sandboxSpecSchema>;

export const decisionSchema = z
  .object({
    verdict: z.enum(VERDICTS).describe('Exclusive releases the sandbox; every other verdict keeps it.'),
    evidence: z
      .enum(EVIDENCE)
      .describe('Which source decided: the Index, the Ledger, or a Reconciliation walk.'),
    blockingReferences: z
      .array(objectName('A SessionReference name.'))
      .max(BLOCKING_REFERENCES_MAX)
      .optional()
      .describe(`The SessionReferences that block destruction (at most ${BLOCKING_REFERENCES_MAX} named).`),
    blockingCount: count('How many references block destruction in all.').optional(),
    reason: z.string().max(MESSAGE_MAX).optional().describe('Why the verdict was reached.'),
    decidedAt: timestamp('When the decision was made.'),
  })
  .describe('The last exclusivity decision.');

export const sandboxStatusSchema = z
  .object({
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe(
        'The metadata.generation this status describes; 0 until the operator has observed the sandbox.',
      ),
    phase: z
      .enum(SANDBOX_PHASES)
      .optional()
      .describe(
        'A summary of the conditions, for people: Blocked (being deleted, DeletionBlocked=True), Terminating ' +
          '(being deleted, not blocked), Suspended (Suspended=True: its pods stopped or stopping), Running ' +
          '(Ready=True) or Pending (Ready=False). The conditions are ' +
          'authoritative; automation should read them, not the phase.',
      ),
    ready: z
      .string()
      .max(16)
      .regex(/^[0-9]+\/[0-9]+$/)
      .optional()
      .describe('Ready sandbox pods out of spec.replicas, e.g. 1/2 (the READY column).'),
    pods: z
      .object({ total: count('Sandbox pods that exist.'), ready: count('Sandbox pods that are Ready.') })
      .optional()
      .describe('Sandbox pod counts.'),
    references: z
      .object({
        attached: count('Attached SessionReferences.'),
        detached: count('Detached SessionReferences (tombstones).'),
        foreign: count("References foreign to this sandbox's worktree (attached or detached)."),
        bytes: count('Bytes of reference data in the index.').optional(),
      })
      .optional()
      .describe('The reference index, summarised.'),
    capacity: z
      .object({
        overflowed: z
          .boolean()
          .describe('The index exceeded its capacity; the sandbox fails closed until erased.'),
        limit: z.enum(CAPACITY_LIMITS).optional().describe('Which limit was exceeded.'),
        observed: count('The observed value when the limit was exceeded.').optional(),
        max: count('The limit.').optional(),
        since: timestamp('When the index overflowed.').optional(),
        erasedFor: z
          .string()
          .max(MESSAGE_MAX)
          .optional()
          .describe(
            'The erase-references annotation value the controller last acted on (each value erases once).',
          ),
      })
      .optional()
      .describe('Capacity of the reference index (512 references / 96 KiB).'),
    decision: decisionSchema.optional(),
    reconciliation: z
      .object({
        state: z.enum(RECONCILIATION_STATES).describe('Outcome of the legacy reconciliation.'),
        marker: z.boolean().describe('True once the index alone may decide exclusivity for this sandbox.'),
        message: z.string().max(MESSAGE_MAX).optional().describe('Detail of the last walk.'),
        completedAt: timestamp('When the last walk ended.').optional(),
      })
      .optional()
      .describe('Reconciliation of references older than the index.'),
    unreferencedSince: timestamp('Since when no SessionReference has referenced the sandbox.').optional(),
    idleSince: timestamp(
      'Since when no SessionReference has been Attached (spec.idle counts from it); absent while one is.',
    ).optional(),
    conditions: conditionsSchema.optional(),
  })
  .describe('Observed state of the sandbox, written by the controller.');
export type SandboxStatus = z.infer<typeof sandboxStatusSchema>;

/**
 * The status a Sandbox reads with until the operator writes its first one: the CRD's default for `status`,
 * which the API server applies on every read of an object stored without one (a new Sandbox: create drops
 * status on a resource with the status subresource; a restore). Observed generation 0 is below every
 * generation, so kstatus (Flux, kpt) reads the sandbox InProgress, not Current, until the operator has
 * looked (docs/health.md). It is not a status the operator wrote: that one always records `reconciliation`.
 */
export const UNOBSERVED_STATUS = { observedGeneration: 0 } as const satisfies SandboxStatus;
export type SandboxDecision = z.infer<typeof decisionSchema>;
