/**
 * The controller's errors as one union, and the pure policy that says what a failed reconcile does next.
 *
 * Every reconcile failure is classified once (`controllerErrorOf`), then `errorPolicy` matches the union
 * exhaustively: adding a kind without deciding its retry is a type error. The runner applies the decision;
 * nothing else chooses a retry. docs/deletion.md ("When a step fails") explains the choices.
 */
import { KubeRequestError } from '../kube/errors.ts';
import { forbiddenMisconfiguration, type Misconfiguration } from './forbidden.ts';

export type { Misconfiguration } from './forbidden.ts';

/**
 * A setting outside the reconcile is wrong (a pod template no shell reaper mode fits, a missing permission):
 * thrown by domain code that found it, with what a person must change.
 */
export class MisconfigurationError extends Error {
  readonly kind = 'Misconfigured';
  constructor(
    readonly misconfiguration: Misconfiguration,
    options: ErrorOptions,
  ) {
    super(`${misconfiguration.refused}; fix: ${misconfiguration.fix}`, options);
    this.name = 'MisconfigurationError';
  }
}

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
  /** Retrying cannot help until a person acts: a 403 (RBAC, admission, Pod Security), an admission denial, or a MisconfigurationError. */
  | {
      readonly kind: 'Misconfigured';
      readonly error: KubeRequestError | MisconfigurationError;
      readonly misconfiguration: Misconfiguration;
    }
  /** The lease was lost; the process must stop leading. */
  | { readonly kind: 'LeaseLost'; readonly error: LeaseLostError }
  /** Anything else thrown: unexpected, so kept and retried like a failed request, loudly. */
  | { readonly kind: 'Unexpected'; readonly error: unknown };

export function controllerErrorOf(error: unknown): ControllerError {
  if (error instanceof MisconfigurationError)
    return { kind: 'Misconfigured', error, misconfiguration: error.misconfiguration };
  // A create refused because its namespace is terminating is a 403 too, but an expected outcome, not a setting.
  if (
    error instanceof KubeRequestError &&
    ((error.status === 403 && !error.namespaceTerminating) || error.admissionDenied)
  )
    return { kind: 'Misconfigured', error, misconfiguration: forbiddenMisconfiguration(error) };
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
  /**
   * Retrying cannot help until a person changes a setting: say it once with the fix, tell the domain (which
   * records it on the object), and look again only on a change of the object or the slow recheck.
   */
  | { readonly kind: 'AwaitFix'; readonly why: string; readonly misconfiguration: Misconfiguration }
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
    case 'Misconfigured':
      return {
        kind: 'AwaitFix',
        why: 'reconcile refused by a setting only a person can change; not retried until it changes',
        misconfiguration: error.misconfiguration,
      };
    case 'LeaseLost':
      return { kind: 'Terminal', why: 'leadership lost; this replica stops reconciling' };
    case 'Unexpected':
      return { kind: 'RetryWithBackoff', level: 'warn', why: 'reconcile failed; retrying with backoff' };
  }
}
