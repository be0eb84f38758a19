/**
 * What a refused attach undoes, pure: exactly what its own write did and nothing more (docs/client.md). A
 * reference it created is deleted, preconditioned on what it created; one that existed (a tombstone, an
 * earlier attachment) gets its earlier state and route back, preconditioned on the attach's write — never
 * deleted, since it may be what blocks the deletion. Every client plans alike:
 * test/conformance/vectors/withdrawal.json holds the cases.
 */

/** What the attach's write did. */
export type AttachWrite =
  | { readonly kind: 'Created'; readonly uid: string; readonly resourceVersion: string }
  | {
      readonly kind: 'Reattached';
      /** The reference as the re-attach found it (either field absent when it could not be read). */
      readonly before: { readonly state?: string; readonly route?: string };
      readonly resourceVersion: string;
    };

/** What a refused attach did with the reference it had written. */
export type Withdrawal =
  /** The attach created the reference, and deleted it again (preconditioned on what it created). */
  | 'Deleted'
  /** The reference existed; its earlier state and route were put back (preconditioned on the attach's write). */
  | 'Restored'
  /** The reference existed as it is now (already Attached, same route): nothing to undo. */
  | 'Unchanged'
  /** Someone wrote the reference after the attach did: it is left as they made it (an extra reference only blocks). */
  | 'LeftChanged';

export type WithdrawalPlan =
  | {
      readonly kind: 'Delete';
      readonly preconditions: { readonly uid: string; readonly resourceVersion: string };
    }
  | {
      readonly kind: 'Restore';
      /** The merge patch that puts the earlier state back, preconditioned on the attach's own write. */
      readonly patch: {
        readonly metadata: { readonly resourceVersion: string };
        readonly spec: { readonly state: string; readonly route: string };
      };
    }
  | { readonly kind: 'Nothing' };

export function planWithdrawal(written: AttachWrite, route: string): WithdrawalPlan {
  if (written.kind === 'Created')
    return {
      kind: 'Delete',
      preconditions: { uid: written.uid, resourceVersion: written.resourceVersion },
    };
  const { before } = written;
  if (before.state === 'Attached' && before.route === route) return { kind: 'Nothing' };
  return {
    kind: 'Restore',
    patch: {
      metadata: { resourceVersion: written.resourceVersion },
      spec: { state: before.state ?? 'Attached', route: before.route ?? route },
    },
  };
}
