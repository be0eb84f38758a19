/**
 * Reusable field schemas. Every field carries its description (for `kubectl explain`) and its limits
 * (for the API server), so the CRDs generated from these schemas refuse bad objects by themselves.
 */
import { z } from 'zod';
import {
  CONDITIONS_MAX,
  DNS_LABEL_PATTERN,
  DNS_SUBDOMAIN_PATTERN,
  IDENTIFIER_PATTERN,
  CONDITION_MESSAGE_MAX,
  CONDITION_REASON_MAX,
  CONDITION_REASON_PATTERN,
  CONDITION_TYPE_MAX,
  CONDITION_TYPE_PATTERN,
} from './limits.ts';

/** An id such as a session, worktree or turn id. */
export const identifier = (description: string, max: number) =>
  z.string().min(1).max(max).regex(new RegExp(IDENTIFIER_PATTERN)).describe(description);

export const objectName = (description: string, max = 253) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(new RegExp(max <= 63 ? DNS_LABEL_PATTERN : DNS_SUBDOMAIN_PATTERN))
    .describe(description);

export const timestamp = (description: string) => z.iso.datetime({ offset: true }).describe(description);

export const count = (description: string) => z.int32().min(0).describe(description);

/** Keeps a field from changing once written: a CEL transition rule the API server enforces. */
export const immutable = <T extends z.ZodType>(schema: T, field: string): T =>
  schema.meta({
    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: `${field} is immutable` }],
  });

export const CONDITION_STATUS = ['True', 'False', 'Unknown'] as const;

export const conditionSchema = z
  .object({
    type: z
      .string()
      .min(1)
      .max(CONDITION_TYPE_MAX)
      .regex(new RegExp(CONDITION_TYPE_PATTERN))
      .describe(
        'Type of condition in CamelCase, e.g. Ready or DeletionBlocked; types written by others may carry a ' +
          'domain prefix (example.com/Compliant).',
      ),
    status: z.enum(CONDITION_STATUS).describe('Status of the condition: True, False or Unknown.'),
    reason: z
      .string()
      .min(1)
      .max(CONDITION_REASON_MAX)
      .regex(new RegExp(CONDITION_REASON_PATTERN))
      .describe('Machine-readable reason for the last transition, in CamelCase.'),
    message: z.string().max(CONDITION_MESSAGE_MAX).describe('Human-readable detail of the last transition.'),
    lastTransitionTime: timestamp('When the condition last changed status.'),
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe('The metadata.generation the condition was computed from.'),
  })
  .describe('One observation of the object, in the metav1.Condition shape.');
export type Condition = z.infer<typeof conditionSchema>;

export const conditionsSchema = z
  .array(conditionSchema)
  .max(CONDITIONS_MAX)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
  .describe('Latest observations of the object, one per condition type.');
