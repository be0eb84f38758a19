/** Whole objects as read from the API server: metadata plus the spec and status schemas. */
import { z } from 'zod';
import { API_VERSION, SANDBOX, SESSION_REFERENCE } from './names.ts';
import { sandboxSpecSchema, sandboxStatusSchema } from './sandbox.ts';
import { sessionReferenceSpecSchema, sessionReferenceStatusSchema } from './session-reference.ts';

/**
 * The metadata the operator reads. Unknown metadata (managedFields, …) is dropped on parse so the cache
 * holds only what decisions need.
 */
export const objectMetaSchema = z.object({
  name: z.string().min(1),
  namespace: z.string().min(1),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  creationTimestamp: z.union([z.string(), z.date()]).optional(),
  deletionTimestamp: z.union([z.string(), z.date()]).optional(),
  finalizers: z.array(z.string()).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof objectMetaSchema>;

export const sandboxSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(SANDBOX.kind),
  metadata: objectMetaSchema,
  spec: sandboxSpecSchema,
  status: sandboxStatusSchema.optional(),
});
export type Sandbox = z.infer<typeof sandboxSchema>;

export const sessionReferenceSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(SESSION_REFERENCE.kind),
  metadata: objectMetaSchema,
  spec: sessionReferenceSpecSchema,
  status: sessionReferenceStatusSchema.optional(),
});
export type SessionReference = z.infer<typeof sessionReferenceSchema>;

/**
 * What the operator's decisions read of a Sandbox, and all its cache keeps (issue 26, #5): no pod template
 * (a tenant's to fill, up to the API server's object limit; only pod creation reads it, by a live GET), of
 * the labels only the warm pools' (warm-pool, sandbox-claim), and only the operator's own annotations (not kubectl's last-applied copy of the whole object).
 * A whole Sandbox is one too, so a turn may go on from a write's answer.
 */
export type SandboxState = Omit<Sandbox, 'spec'> & { spec: Omit<Sandbox['spec'], 'podTemplate'> };
