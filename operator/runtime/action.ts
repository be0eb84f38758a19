/**
 * What a reconcile asks for next. Exactly two kinds, as kube-runtime's `Action`: wait for a change of the
 * watched objects, or look again after a delay. Errors travel separately (thrown, then `errorPolicy`).
 */
export type Action =
  { readonly kind: 'AwaitChange' } | { readonly kind: 'RequeueAfter'; readonly ms: number };

export const awaitChange = (): Action => ({ kind: 'AwaitChange' });
export const requeueAfter = (ms: number): Action => ({
  kind: 'RequeueAfter',
  ms: Math.max(0, Math.ceil(ms)),
});

/** The sooner of two actions: a reconcile that has several reasons to come back uses the earliest. */
export function sooner(a: Action, b: Action): Action {
  if (a.kind === 'AwaitChange') return b;
  if (b.kind === 'AwaitChange') return a;
  return a.ms <= b.ms ? a : b;
}
