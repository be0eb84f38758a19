/**
 * The binding's write on the chosen pool sandbox, pure (docs/warm-pools.md, "Claims", step 2): one JSON Patch
 * that holds only while the sandbox is still free and open. It `test`s the uid, the claim label absent (a JSON
 * Patch `test` of null holds on a missing member, as the API server applies it), and — the attach's fence
 * (docs/adr/0003-attach-handshake.md), read by the write itself — no deletionTimestamp and no cleanup fence;
 * then it `add`s the claim label and `remove`s the pool's owner reference (tested by uid first), so neither the
 * pool nor garbage collection of a deleted pool ever touches a claimed sandbox.
 *
 * Sent after the claim's reference is created, it is the attach's consistent read of the fence: it lands only
 * on a version with neither fence, so a cleanup or erase that fences later finds the reference. It does not
 * test the resourceVersion: the Sandbox's status writes (a reference counted, a condition) would lose it races
 * for nothing; a pool's shrink or Recreate deletes with a resourceVersion precondition, so exactly one of the
 * two still wins (the deletion's timestamp fails this patch; this patch's new version fails the deletion).
 */
import type { JsonPatchOp } from '../finalizer.ts';
import { ANNOTATIONS, LABELS } from '../../api/names.ts';

/** A JSON Pointer token (RFC 6901): `~` and `/` escaped. */
export const pointerToken = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

export const CLAIM_LABEL_PATH = `/metadata/labels/${pointerToken(LABELS.sandboxClaim)}`;
export const CLEANUP_FENCE_PATH = `/metadata/annotations/${pointerToken(ANNOTATIONS.cleanupFence)}`;

export type BindingTarget = {
  readonly uid: string;
  /** Where the pool's owner reference is in metadata.ownerReferences, and its uid. */
  readonly poolOwner: { readonly index: number; readonly uid: string };
};

export function bindingPatch(target: BindingTarget, claim: string): JsonPatchOp[] {
  const owner = `/metadata/ownerReferences/${String(target.poolOwner.index)}`;
  return [
    { op: 'test', path: '/metadata/uid', value: target.uid },
    { op: 'test', path: CLAIM_LABEL_PATH, value: null },
    { op: 'test', path: '/metadata/deletionTimestamp', value: null },
    { op: 'test', path: CLEANUP_FENCE_PATH, value: null },
    { op: 'add', path: CLAIM_LABEL_PATH, value: claim },
    { op: 'test', path: `${owner}/uid`, value: target.poolOwner.uid },
    { op: 'remove', path: owner },
  ];
}
