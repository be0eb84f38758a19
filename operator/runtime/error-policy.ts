/**
 * The controller's errors as one union, and the pure policy that says what a failed reconcile does next.
 *
 * Every reconcile failure is classified once (`controllerErrorOf`), then `errorPolicy` matches the union
 * exhaustively: adding a kind without deciding its retry is a type error. The runner applies the decision;
 * nothing else chooses a retry. docs/deletion.md ("When a step fails") explains the choices.
 */
import { KubeRequestError } from '../kube/errors.ts';

/** Leadership ended without this replica giving it up: the renew deadline passed. The cause is the last renew failure. */
export class LeaseLostError extends Error {
  readonly kind = 'LeaseLost';
  constructor(
    readonly lease: string,
    readonly renewDeadlineMs: number,
    options: ErrorOptions,
  ) {
    super(`leader election lost: lease ${lease} not renewed within ${renewDeadlineMs} ms`, options);
    this.name = 'LeaseLostError';
  }
}

export type ControllerError =
  /** A Kubernetes request failed; its step, target and HTTP status say which. */
  | { readonly kind: 'KubeRequestFailed'; readonly error: KubeRequestError }
  /** Our own bug (TypeError, RangeError, ReferenceError): controller-runtime's panic. */
  | { readonly kind: 'Bug'; readonly error: Error }
  /** The lease was lost; the process must stop leading. */
  | { readonly kind: 'LeaseLost'; readonly error: LeaseLostError }
  /** Anything else thrown: unexpected, so kept and retried like a failed request, loudly. */
  | { readonly kind: 'Unexpected'; readonly error: unknown };

export function controllerErrorOf(error: unknown): ControllerError {
  if (error instanceof KubeRequestError) return { kind: 'KubeRequestFailed', error };
  if (error instanceof LeaseLostError) return { kind: 'LeaseLost', error };
  if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError)
    return { kind: 'Bug', error };
  return { kind: 'Unexpected', error };
}

export type ErrorDecision =
  /** Put the key back with its per-key exponential backoff. */
  | { readonly kind: 'RetryWithBackoff'; readonly level: 'info' | 'warn' | 'error'; readonly why: string }
  /** Look again after a fixed delay, without counting a failure. */
  | { readonly kind: 'RequeueAfter'; readonly ms: number; readonly why: string }
  /** Retrying cannot help: stop (for leadership: the process exits and a standby takes over). */
  | { readonly kind: 'Terminal'; readonly why: string };

export function errorPolicy(error: ControllerError): ErrorDecision {
  switch (error.kind) {
    case 'KubeRequestFailed':
      // A stale write is the expected outcome of a race: the next attempt reads fresh state.
      if (error.error.conflict)
        return {
          kind: 'RetryWithBackoff',
          level: 'info',
          why: 'stale write refused by the API server; retrying from fresh state',
        };
      return { kind: 'RetryWithBackoff', level: 'warn', why: 'reconcile failed; retrying with backoff' };
    case 'Bug':
      return {
        kind: 'RetryWithBackoff',
        level: 'error',
        why: 'reconcile hit a programming error; retrying with backoff',
      };
    case 'LeaseLost':
      return { kind: 'Terminal', why: 'leadership lost; this replica stops reconciling' };
    case 'Unexpected':
      return { kind: 'RetryWithBackoff', level: 'warn', why: 'reconcile failed; retrying with backoff' };
  }
}
