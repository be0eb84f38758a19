/** What the reaper answers a registration and a turn end; the endpoint maps each to HTTP. */
import type { KeepReason, TurnEndDecision } from './turn-decision.ts';

export type RegisterOutcome =
  | { readonly kind: 'Registered' | 'AlreadyRegistered'; readonly shell: string }
  /** The turn had ended: the shell joined that turn's retire (answered 409 TurnEnded). */
  | { readonly kind: 'Included'; readonly shell: string; readonly retire: string }
  | {
      readonly kind: 'Refused';
      readonly code: 'IdentityMismatch' | 'ShellConflict' | 'ProtectedProcess';
      readonly reason: string;
    };

export type EndTurnOutcome =
  | { readonly kind: 'Retiring'; readonly retire: string; readonly groups: number }
  | { readonly kind: 'Kept'; readonly reason: KeepReason }
  | { readonly kind: 'Duplicate'; readonly decision: TurnEndDecision; readonly finished: boolean };
