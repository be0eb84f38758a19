/**
 * The `SandboxTemplate` resource: a sandbox's blueprint (blueprint.ts) without a worktree, a provider or an
 * operating mode. Pools and cold sandbox claims make Sandboxes from it, each with a copy of the blueprint, so
 * a change to the template alters no existing sandbox (docs/warm-pools.md). It has no status.
 */
import { z } from 'zod';
import { API_VERSION, SANDBOX_TEMPLATE } from './names.ts';
import { BLUEPRINT_RULES, blueprintShape } from './blueprint.ts';
import { objectMetaSchema } from './objects.ts';

export const sandboxTemplateSpecSchema = z
  .object(blueprintShape)
  .meta({ 'x-kubernetes-validations': [...BLUEPRINT_RULES] })
  .describe(
    "The blueprint of the sandboxes made from this template: a Sandbox's spec without worktree, provider and " +
      'operatingMode, with the same limits and rules.',
  );
export type SandboxTemplateSpec = z.infer<typeof sandboxTemplateSpecSchema>;

export const sandboxTemplateSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(SANDBOX_TEMPLATE.kind),
  metadata: objectMetaSchema,
  spec: sandboxTemplateSpecSchema,
});
export type SandboxTemplate = z.infer<typeof sandboxTemplateSchema>;
