/**
 * Parsing objects read from the API server. A malformed object is a typed error naming the field, never a
 * silent default: callers fail closed on it (a sandbox with a malformed reference is never destroyed).
 */
import type { z } from 'zod';
import { sandboxSchema, sessionReferenceSchema, type Sandbox, type SessionReference } from './objects.ts';
import { sandboxTemplateSchema, type SandboxTemplate } from './sandbox-template.ts';
import { sandboxWarmPoolSchema, type SandboxWarmPool } from './sandbox-warm-pool.ts';
import { sandboxClaimSchema, type SandboxClaim } from './sandbox-claim.ts';

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: MalformedObjectError };

/** An object from the API server did not match its schema. `field` is the dotted path, e.g. `spec.worktree`. */
export class MalformedObjectError extends Error {
  readonly kind = 'MalformedObject';
  constructor(
    readonly objectKind: string,
    readonly objectKey: string,
    readonly field: string,
    readonly problem: string,
    options?: ErrorOptions,
    /** The object's uid and version as read, when it has them: to say the refusal on the object itself. */
    readonly identity: { readonly uid?: string; readonly resourceVersion?: string } = {},
  ) {
    super(`${objectKind} ${objectKey} is malformed: ${field}: ${problem}`, options);
    this.name = 'MalformedObjectError';
  }
}

function identityOf(raw: unknown): { uid?: string; resourceVersion?: string } {
  const meta = (raw as { metadata?: { uid?: unknown; resourceVersion?: unknown } } | null)?.metadata;
  return {
    ...(typeof meta?.uid === 'string' ? { uid: meta.uid } : {}),
    ...(typeof meta?.resourceVersion === 'string' ? { resourceVersion: meta.resourceVersion } : {}),
  };
}

function keyOf(raw: unknown): string {
  if (typeof raw !== 'object' || raw === null) return '<not an object>';
  const meta = (raw as { metadata?: { namespace?: unknown; name?: unknown } }).metadata;
  const ns = typeof meta?.namespace === 'string' ? meta.namespace : '?';
  const name = typeof meta?.name === 'string' ? meta.name : '?';
  return `${ns}/${name}`;
}

function parseWith<T>(schema: z.ZodType<T>, kind: string, raw: unknown): Parsed<T> {
  const result = schema.safeParse(raw);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : '<root>';
  return {
    ok: false,
    error: new MalformedObjectError(
      kind,
      keyOf(raw),
      field,
      issue?.message ?? 'invalid',
      { cause: result.error },
      identityOf(raw),
    ),
  };
}

export const parseSandbox = (raw: unknown): Parsed<Sandbox> => parseWith(sandboxSchema, 'Sandbox', raw);

export const parseSessionReference = (raw: unknown): Parsed<SessionReference> =>
  parseWith(sessionReferenceSchema, 'SessionReference', raw);

export const parseSandboxTemplate = (raw: unknown): Parsed<SandboxTemplate> =>
  parseWith(sandboxTemplateSchema, 'SandboxTemplate', raw);

export const parseSandboxWarmPool = (raw: unknown): Parsed<SandboxWarmPool> =>
  parseWith(sandboxWarmPoolSchema, 'SandboxWarmPool', raw);

export const parseSandboxClaim = (raw: unknown): Parsed<SandboxClaim> =>
  parseWith(sandboxClaimSchema, 'SandboxClaim', raw);
