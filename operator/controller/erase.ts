/**
 * The administrator's erase of a sandbox's reference index (the only way out of an overflow): every
 * SessionReference of the sandbox is deleted, from a consistent LIST, and the capacity latch is cleared.
 * Each value of the erase-references annotation erases once; what was done is logged and evented.
 *
 * It returns facts and writes no status: the reconcile's one status writer records `erasedFor` and the
 * index as the API server has it after the erase, so a stale cache cannot re-latch the overflow.
 */
import type { Logger } from 'pino';
import { ANNOTATIONS, API_VERSION, SANDBOX } from '../api/names.ts';
import type { SandboxState } from '../api/objects.ts';
import type { Parsed } from '../api/parse.ts';
import type { SessionReference } from '../api/objects.ts';
import type { ReconcilerContext } from './context.ts';
import type { ObjectRef } from './ports.ts';

export const sandboxRef = (sandbox: SandboxState): ObjectRef => ({
  kind: SANDBOX.kind,
  apiVersion: API_VERSION,
  namespace: sandbox.metadata.namespace,
  name: sandbox.metadata.name,
  uid: sandbox.metadata.uid,
});

export type Erased = {
  /** The erase request acted on (the annotation's value). */
  readonly request: string;
  /** The references the erase deleted (or found gone), as the API server answered. */
  readonly erased: number;
  /** What the API server holds after it: references attached since (a consistent LIST). */
  readonly remaining: readonly Parsed<SessionReference>[];
};

export async function eraseReferences(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  request: string,
  log: Logger,
): Promise<Erased> {
  const { namespace, name } = sandbox.metadata;
  log.warn(
    {
      request,
      annotation: ANNOTATIONS.eraseReferences,
      overflowed: sandbox.status?.capacity?.overflowed ?? false,
    },
    'erasing the reference index on administrator request',
  );
  // Each reference from a consistent LIST, preconditioned on what was listed; the counts are the API server's.
  const { deleted } = await ctx.ports.references.deleteAll(namespace, name);
  const remaining = await ctx.ports.references.listLive(namespace, name);
  ctx.ports.events.record(
    sandboxRef(sandbox),
    'Warning',
    'ReferencesErased',
    `erased ${deleted.length} reference(s) on administrator request "${request}"; capacity latch cleared` +
      (remaining.length > 0 ? `; ${remaining.length} attached since` : ''),
  );
  return { request, erased: deleted.length, remaining };
}
