/**
 * The administrator's erase of a sandbox's reference index (the only way out of an overflow): every
 * SessionReference of the sandbox is deleted, from a consistent LIST, and the capacity latch is cleared.
 * Each value of the erase-references annotation erases once; what was done is logged and evented.
 */
import type { Logger } from 'pino';
import { ANNOTATIONS, API_VERSION, SANDBOX } from '../api/names.ts';
import type { Sandbox } from '../api/objects.ts';
import type { ReconcilerContext } from './context.ts';
import type { ObjectRef } from './ports.ts';

export const sandboxRef = (sandbox: Sandbox): ObjectRef => ({
  kind: SANDBOX.kind,
  apiVersion: API_VERSION,
  namespace: sandbox.metadata.namespace,
  name: sandbox.metadata.name,
  uid: sandbox.metadata.uid,
});

export async function eraseReferences(
  ctx: ReconcilerContext,
  sandbox: Sandbox,
  request: string,
  log: Logger,
): Promise<void> {
  const { namespace, name } = sandbox.metadata;
  const live = await ctx.ports.references.listLive(namespace, name);
  const names = live.map((parsed) =>
    parsed.ok ? parsed.value.metadata.name : (parsed.error.objectKey.split('/')[1] ?? ''),
  );
  log.warn(
    {
      request,
      annotation: ANNOTATIONS.eraseReferences,
      references: names.length,
      overflowed: sandbox.status?.capacity?.overflowed ?? false,
    },
    'erasing the reference index on administrator request',
  );
  await ctx.ports.references.deleteAll(namespace, name);
  await ctx.ports.sandboxes.patchStatus(namespace, name, {
    capacity: { overflowed: false, erasedFor: request },
  });
  await ctx.ports.events.record(
    sandboxRef(sandbox),
    'Warning',
    'ReferencesErased',
    `erased ${names.length} reference(s) on administrator request "${request}"; capacity latch cleared`,
  );
}
