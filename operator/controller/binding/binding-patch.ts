/**
 * The binding's write on the chosen pool sandbox, pure (docs/warm-pools.md, "Claims", step 1): one JSON Patch
 * that holds only on the object as it was read. `test` its resourceVersion (a pool's shrink or Recreate
 * deletes with a resourceVersion precondition too, so exactly one of the two wins), `test` the claim label
 * absent (a JSON Patch `test` of null holds on a missing member, as the API server applies it), `add` the
 * claim label, `remove` the pool's owner reference (tested by uid first), so neither the pool nor garbage
 * collection of a deleted pool ever touches a claimed sandbox.
 */
import type { JsonPatchOp } from '../finalizer.ts';
import { SANDBOX_CLAIM_LABEL } from './vocabulary.ts';

/** A JSON Pointer token (RFC 6901): `~` and `/` escaped. */
export const pointerToken = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

export const CLAIM_LABEL_PATH = `/metadata/labels/${pointerToken(SANDBOX_CLAIM_LABEL)}`;

export type BindingTarget = {
  readonly uid: string;
  readonly resourceVersion: string;
  /** Where the pool's owner reference is in metadata.ownerReferences, and its uid. */
  readonly poolOwner: { readonly index: number; readonly uid: string };
};

export function bindingPatch(target: BindingTarget, claim: string): JsonPatchOp[] {
  const owner = `/metadata/ownerReferences/${String(target.poolOwner.index)}`;
  return [
    { op: 'test', path: '/metadata/uid', value: target.uid },
    { op: 'test', path: '/metadata/resourceVersion', value: target.resourceVersion },
    { op: 'test', path: CLAIM_LABEL_PATH, value: null },
    { op: 'add', path: CLAIM_LABEL_PATH, value: claim },
    { op: 'test', path: `${owner}/uid`, value: target.poolOwner.uid },
    { op: 'remove', path: owner },
  ];
}
