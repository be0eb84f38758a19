/**
 * A deleted claim's release (docs/warm-pools.md, "Claims"): forget its reference, then delete its sandbox
 * — each with a uid precondition — then remove the claim's finalizer with a JSON Patch that tests the list.
 * The sandbox's deletion is the ordinary decision: another session attached meanwhile keeps it, Blocked,
 * and the claim goes regardless (the sandbox is no longer the claim's to hold).
 *
 * Both lists are consistent reads by the claim label, so a binding that stopped half-way (a labelled sandbox,
 * no status yet) is released too. A delete that did not happen (answered 409: another incarnation under the
 * name, or a conflict) keeps the finalizer and the release goes again from fresh lists: once the claim is gone,
 * nothing would ever forget a reference left behind, and it would hold its sandbox for ever.
 */
import type { Logger } from 'pino';
import { removeFinalizerFromIncarnation } from '../finalizer.ts';
import type { BindingPorts } from './ports.ts';
import type { ClaimRecord } from './records.ts';
import { SANDBOX_CLAIM_FINALIZER } from '../../api/names.ts';

export type Release = { readonly kind: 'Released' | 'FinalizerChanged' | 'NotAllDeleted' };

export async function releaseClaim(ports: BindingPorts, claim: ClaimRecord, log: Logger): Promise<Release> {
  const { namespace, name } = claim;
  const references = await ports.references.listOfClaim(namespace, name);
  const forgotten: string[] = [];
  for (const reference of references)
    if (await ports.references.delete(namespace, reference)) forgotten.push(reference.name);
  const sandboxes = await ports.sandboxes.listOfClaim(namespace, name);
  const deleted: string[] = [];
  for (const sandbox of sandboxes)
    if (!sandbox.deleting && (await ports.sandboxes.delete(sandbox))) deleted.push(sandbox.name);
  const alreadyDeleting = sandboxes.filter((s) => s.deleting).map((s) => s.name);
  if (forgotten.length < references.length || deleted.length + alreadyDeleting.length < sandboxes.length) {
    // Not deleted (409) or gone since the lists: the next turn lists again (a gone one is no longer listed).
    log.info(
      { forgotten, deleted, listed: { references: references.length, sandboxes: sandboxes.length } },
      'claim deleted, but a delete of its reference or sandbox did not happen; releasing again from fresh lists',
    );
    return { kind: 'NotAllDeleted' };
  }
  log.info(
    { forgotten, deleted, alreadyDeleting },
    'claim deleted: its reference forgotten and its sandbox deleted (the decision keeps it if others attached)',
  );
  const ops = removeFinalizerFromIncarnation(
    { uid: claim.uid, finalizers: claim.finalizers, resourceVersion: claim.resourceVersion },
    SANDBOX_CLAIM_FINALIZER,
  );
  if (ops === undefined) return { kind: 'Released' };
  const written = await ports.claims.patchMetadata(claim, ops);
  return { kind: written === 'Written' || written.kind === 'Gone' ? 'Released' : 'FinalizerChanged' };
}
