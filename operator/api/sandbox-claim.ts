/**
 * The `SandboxClaim` resource: a session asks for a sandbox from a pool (warm; cold when the pool is empty)
 * or from a template (cold). The operator binds one and gives the session its SessionReference in the same
 * step: the binding is an attach (docs/warm-pools.md, "Claims"). Its spec is immutable.
 */
import { z } from 'zod';
import { API_VERSION, SANDBOX_CLAIM } from './names.ts';
import { conditionsSchema, immutable, objectName, timestamp } from './fields.ts';
import { SANDBOX_NAME_MAX, WARM_POOL_NAME_MAX } from './limits.ts';
import { objectMetaSchema } from './objects.ts';
import { routeSchema, SESSION_IDENTITY_RULES, sessionIdentityShape } from './session-reference.ts';
import { templateRefSchema } from './sandbox-warm-pool.ts';

/** Warm: a pool's ready sandbox was bound. Cold: a sandbox was made for the claim. */
export const LAUNCH_TYPES = ['Warm', 'Cold'] as const;
export type LaunchType = (typeof LAUNCH_TYPES)[number];

/** Bound: the claim has its sandbox and reference. Ready: the bound sandbox is Ready. */
export const SANDBOX_CLAIM_CONDITIONS = { bound: 'Bound', ready: 'Ready' } as const;

export const sandboxClaimSpecSchema = z
  .object({
    warmPoolRef: immutable(
      z
        .object({
          name: objectName('Name of the SandboxWarmPool (same namespace).', WARM_POOL_NAME_MAX),
        })
        .describe(
          'The pool (same namespace) to bind a ready sandbox from; when it has none, a cold sandbox is made ' +
            "from the pool's template.",
        ),
      'spec.warmPoolRef',
    ).optional(),
    templateRef: immutable(templateRefSchema, 'spec.templateRef')
      .optional()
      .describe('The SandboxTemplate (same namespace) to make a cold sandbox from.'),
    ...sessionIdentityShape,
    route: immutable(routeSchema, 'spec.route'),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'has(self.warmPoolRef) != has(self.templateRef)',
        message: 'exactly one of spec.warmPoolRef and spec.templateRef must be set',
      },
      {
        rule: 'has(self.warmPoolRef) == has(oldSelf.warmPoolRef)',
        message: 'spec.warmPoolRef cannot be added or removed after creation',
      },
      {
        rule: 'has(self.templateRef) == has(oldSelf.templateRef)',
        message: 'spec.templateRef cannot be added or removed after creation',
      },
      ...SESSION_IDENTITY_RULES,
    ],
  })
  .describe(
    'Where the sandbox comes from, and the session it is for: the fields of the SessionReference the ' +
      'binding creates. Immutable.',
  );
export type SandboxClaimSpec = z.infer<typeof sandboxClaimSpecSchema>;

export const sandboxClaimStatusSchema = z
  .object({
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe(
        'The metadata.generation this status describes; 0 until the operator has observed the claim.',
      ),
    sandbox: objectName('The bound Sandbox (same namespace).', SANDBOX_NAME_MAX).optional(),
    reference: objectName("The session's SessionReference to the bound Sandbox.").optional(),
    launchType: z
      .enum(LAUNCH_TYPES)
      .optional()
      .describe("Warm: a pool's ready sandbox was bound. Cold: a sandbox was made for this claim."),
    boundAt: timestamp('When the sandbox was bound.').optional(),
    conditions: conditionsSchema.optional(),
  })
  .describe('Observed state of the claim, written by the operator.');
export type SandboxClaimStatus = z.infer<typeof sandboxClaimStatusSchema>;

export const sandboxClaimSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(SANDBOX_CLAIM.kind),
  metadata: objectMetaSchema,
  spec: sandboxClaimSpecSchema,
  status: sandboxClaimStatusSchema.optional(),
});
export type SandboxClaim = z.infer<typeof sandboxClaimSchema>;
