/**
 * Finalizer edits as JSON Patches that test the list they were computed from, so a stale cache or a
 * concurrent writer makes the patch fail (422) instead of dropping another party's finalizer.
 * Pure: the caller sends the patch and retries from fresh state on a conflict.
 */

export type JsonPatchOp =
  | { readonly op: 'test'; readonly path: string; readonly value: unknown }
  | { readonly op: 'add'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

export type FinalizerHolder = {
  readonly finalizers?: readonly string[] | undefined;
  readonly resourceVersion?: string | undefined;
};

/** The test that binds a patch to one incarnation of the object: the name may belong to a newer one. */
export const incarnationTest = (uid: string): JsonPatchOp => ({
  op: 'test',
  path: '/metadata/uid',
  value: uid,
});

/** Undefined when the finalizer is already there. */
export function addFinalizerPatch(holder: FinalizerHolder, finalizer: string): JsonPatchOp[] | undefined {
  const current = holder.finalizers;
  if (current?.includes(finalizer)) return undefined;
  if (current === undefined || current.length === 0) {
    // No list to test: the resourceVersion proves nobody added one since we looked.
    return [
      { op: 'test', path: '/metadata/resourceVersion', value: holder.resourceVersion },
      { op: 'add', path: '/metadata/finalizers', value: [finalizer] },
    ];
  }
  return [
    { op: 'test', path: '/metadata/finalizers', value: current },
    { op: 'add', path: '/metadata/finalizers/-', value: finalizer },
  ];
}

/** Undefined when the finalizer is already gone. */
export function removeFinalizerPatch(holder: FinalizerHolder, finalizer: string): JsonPatchOp[] | undefined {
  const current = holder.finalizers ?? [];
  const position = current.indexOf(finalizer);
  if (position < 0) return undefined;
  return [
    { op: 'test', path: '/metadata/finalizers', value: current },
    { op: 'remove', path: `/metadata/finalizers/${position}` },
  ];
}

/**
 * Removal bound to one incarnation as well as to its list: a same-named object created since the read (a new
 * pod, a re-created Sandbox) may carry the same finalizers, and is not the one that was judged.
 */
export function removeFinalizerFromIncarnation(
  holder: FinalizerHolder & { readonly uid: string },
  finalizer: string,
): JsonPatchOp[] | undefined {
  const patch = removeFinalizerPatch(holder, finalizer);
  return patch && [incarnationTest(holder.uid), ...patch];
}
