/** The `Sandbox` resource: a sandbox's pods, its cleanup policy, and the last exclusivity decision. */
import { z } from 'zod';
import { operatingModeSchema, SUSPENSION_RULES } from './suspension.ts';
import { conditionsSchema, count, identifier, immutable, objectName, timestamp } from './fields.ts';
import { BLOCKING_REFERENCES_MAX, MESSAGE_MAX, PROVIDER_MAX, WORKTREE_ID_MAX } from './limits.ts';
import { volumeClaimTemplatesSchema } from './volume-claims.ts';
import { BLUEPRINT_RULES, blueprintShape } from './blueprint.ts';

export const VERDICTS = ['Exclusive', 'Foreign', 'Incomplete', 'Unavailable', 'Overflowed'] as const;
export type VerdictName = (typeof VERDICTS)[number];
export const EVIDENCE = ['Index', 'Ledger', 'Reconciliation'] as const;
export type Evidence = (typeof EVIDENCE)[number];
export const SANDBOX_PHASES = ['Pending', 'Running', 'Suspended', 'Terminating', 'Blocked'] as const;
export type SandboxPhase = (typeof SANDBOX_PHASES)[number];
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
    ...blueprintShape,
    // Grows, never shrinks: the eviction guard expects spec.replicas pods (the disruption controller reads
    // /scale), so the pods beyond a lower count would run on with as many evictions allowed.
    replicas: blueprintShape.replicas.meta({
      'x-kubernetes-validations': [
        {
          rule: 'self >= oldSelf',
          message:
            'spec.replicas may not decrease: its pods are kept until the sandbox is released, and the eviction ' +
            'guard counts spec.replicas of them; create a new Sandbox for fewer pods',
        },
      ],
    }),
    operatingMode: operatingModeSchema,
    // Made once, when the sandbox is created (volume-claims.ts).
    volumeClaimTemplates: volumeClaimTemplatesSchema,
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'has(self.worktree) == has(oldSelf.worktree)',
        message: 'spec.worktree cannot be added or removed after creation',
      },
      SUSPENSION_RULES[0],
      ...BLUEPRINT_RULES,
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
