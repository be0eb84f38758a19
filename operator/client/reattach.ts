/**
 * Whether an attach may re-attach the reference it found under its name, pure (issue 26, item 8). The name
 * is derived from (sandbox, session), so anyone with create rights can pre-create it with other fixed fields:
 * another worktree makes the session count as that worktree's (the sandbox could be destroyed under it), or
 * another sandbox makes it count for none it uses. So a re-attach is allowed only when every fixed field is
 * the one the attach asks for. They are immutable (the CRD's rules), so the version compared is the version the
 * re-attach's patch is preconditioned on, and nothing can change them in between.
 *
 * Every client judges alike: test/conformance/vectors/reattach.json holds the cases.
 */
import type { SessionReferenceSpec } from '../api/session-reference.ts';

/** The spec fields fixed at creation, in the order they are compared. */
export const FIXED_FIELDS = ['sandbox', 'session', 'worktree', 'role', 'parentSession'] as const;
export type FixedField = (typeof FIXED_FIELDS)[number];

export type ReattachJudgement =
  | { readonly kind: 'Same' }
  /** The first fixed field that differs; `null` for absent (or, stored, not a string). */
  | {
      readonly kind: 'Differs';
      readonly field: FixedField;
      readonly requested: string | null;
      readonly found: string | null;
    };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function judgeReattach(
  requested: Pick<SessionReferenceSpec, FixedField>,
  stored: unknown,
): ReattachJudgement {
  const spec = isRecord(stored) && isRecord(stored['spec']) ? stored['spec'] : {};
  for (const field of FIXED_FIELDS) {
    const wanted = requested[field] ?? null;
    const value = spec[field];
    const found = typeof value === 'string' ? value : null;
    if (found !== wanted) return { kind: 'Differs', field, requested: wanted, found };
  }
  return { kind: 'Same' };
}
