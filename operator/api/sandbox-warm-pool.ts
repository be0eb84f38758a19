/**
 * The `SandboxWarmPool` resource: keeps `spec.replicas` ready, unclaimed Sandboxes made from a template, so a
 * sandbox claim binds one at once (docs/warm-pools.md). `/scale` serves `spec.replicas` to autoscalers.
 */
import { z } from 'zod';
import { API_VERSION, SANDBOX_WARM_POOL } from './names.ts';
import { conditionsSchema, count, objectName } from './fields.ts';
import { LABEL_VALUE_MAX, MESSAGE_MAX, WARM_POOL_REPLICAS_MAX } from './limits.ts';
import { objectMetaSchema } from './objects.ts';

/**
 * What a template change does to the pool's unclaimed sandboxes: OnReplenish keeps them (only sandboxes made
 * later copy the new blueprint), Recreate replaces them. Claimed sandboxes are never touched.
 */
export const UPDATE_STRATEGIES = ['OnReplenish', 'Recreate'] as const;
export type UpdateStrategy = (typeof UPDATE_STRATEGIES)[number];

/** The pool's condition types: Ready is True while every wanted sandbox is ready and unclaimed. */
export const WARM_POOL_CONDITIONS = { ready: 'Ready' } as const;

/** A reference to a SandboxTemplate in the same namespace. */
export const templateRefSchema = z
  .object({
    name: objectName(
      'Name of the SandboxTemplate (same namespace); it labels the sandboxes made from it.',
      LABEL_VALUE_MAX,
    ),
  })
  .describe('The SandboxTemplate (same namespace) whose blueprint the sandboxes copy.');

export const sandboxWarmPoolSpecSchema = z
  .object({
    templateRef: templateRefSchema,
    replicas: z
      .int32()
      .min(0)
      .max(WARM_POOL_REPLICAS_MAX)
      .default(1)
      .describe(
        `Ready, unclaimed sandboxes to keep (0 to ${WARM_POOL_REPLICAS_MAX}); served by /scale for autoscalers.`,
      ),
    updateStrategy: z
      .object({
        type: z
          .enum(UPDATE_STRATEGIES)
          .default('OnReplenish')
          .describe(
            'OnReplenish: unclaimed sandboxes of an older template stay, and only sandboxes made later copy ' +
              'the new blueprint. Recreate: the operator deletes unclaimed sandboxes of an older template and ' +
              'makes new ones. Claimed sandboxes are never touched.',
          ),
      })
      .prefault({})
      .describe('What a change of the template does to the unclaimed sandboxes.'),
  })
  .describe('Desired state of the pool.');
export type SandboxWarmPoolSpec = z.infer<typeof sandboxWarmPoolSpecSchema>;

export const sandboxWarmPoolStatusSchema = z
  .object({
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe('The metadata.generation this status describes; 0 until the operator has observed the pool.'),
    replicas: count('Unclaimed sandboxes of the pool that exist (the /scale status).').optional(),
    readyReplicas: count('Unclaimed sandboxes of the pool that are Ready.').optional(),
    selector: z
      .string()
      .max(MESSAGE_MAX)
      .optional()
      .describe("The label selector of the pool's unclaimed sandboxes (the /scale selector)."),
    conditions: conditionsSchema.optional(),
  })
  .describe('Observed state of the pool, written by the operator.');
export type SandboxWarmPoolStatus = z.infer<typeof sandboxWarmPoolStatusSchema>;

export const sandboxWarmPoolSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(SANDBOX_WARM_POOL.kind),
  metadata: objectMetaSchema,
  spec: sandboxWarmPoolSpecSchema,
  status: sandboxWarmPoolStatusSchema.optional(),
});
export type SandboxWarmPool = z.infer<typeof sandboxWarmPoolSchema>;
