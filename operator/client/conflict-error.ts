/**
 * The error of an attach that found another session's reference under its name (reattach.ts judges it): apart
 * from the judgement, so the pure module holds only the decision.
 */
import type { FixedField, ReattachJudgement } from './reattach.ts';

/**
 * The attach found a reference under its name whose fixed fields are not its own: a squat, or a caller that
 * reuses a session id for another worktree. Nothing was written; the object is left as it was found.
 */
export class SessionReferenceConflictError extends Error {
  readonly kind = 'SessionReferenceConflict';
  readonly field: FixedField;
  readonly requested: string | null;
  readonly found: string | null;
  constructor(
    readonly namespace: string,
    readonly reference: string,
    differs: Extract<ReattachJudgement, { kind: 'Differs' }>,
  ) {
    const show = (value: string | null) => (value === null ? 'none' : JSON.stringify(value));
    super(
      `sessionreference ${namespace}/${reference} already exists with spec.${differs.field} ${show(differs.found)}, ` +
        `not ${show(differs.requested)} as this attach asks: it was not created for this session, so it is not ` +
        're-attached (nothing was written; choose another session id, or have an administrator remove it)',
    );
    this.name = 'SessionReferenceConflictError';
    this.field = differs.field;
    this.requested = differs.requested;
    this.found = differs.found;
  }
}
