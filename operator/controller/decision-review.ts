/**
 * The operator's record of an Exclusive decision, judged again at admission (docs/adr/0011). A recorded
 * Exclusive verdict is final: the deletion turn releases the pods, the workspace and the index without deciding
 * again (deletion/steps.ts), since a reference written after it is an attach that saw the deletion. So the record
 * is what a leaked operator token would forge — the status subresource is the operator's to write — to have the
 * operator itself destroy a shared sandbox. This reviewer reads what the decision read: a consistent LIST of the
 * sandbox's SessionReferences, through the one `hasForeignReference`, and refuses the record while a foreign
 * (or unreadable) reference is there or the index is over its limits. Its registration (api/operator-review.ts)
 * sends it only a status UPDATE of the operator's users that turns the verdict Exclusive.
 *
 * What it cannot read is the legacy evidence (the session ledger): an adopted sandbox's marker stays the
 * operator's word (docs/security.md). A refusal is a 409: to the operator a stale write, which it retries from
 * fresh state, deciding again. A read that fails refuses too (503).
 */
import type { Logger } from 'pino';
import type { IndexLimits } from '../api/limits.ts';
import type { SessionReference } from '../api/objects.ts';
import { parseSandbox, type Parsed } from '../api/parse.ts';
import { foreignReferences, hasForeignReference } from '../exclusivity/foreign.ts';
import { referenceEntryOf } from '../exclusivity/reference.ts';
import { buildReferenceIndex } from '../exclusivity/reference-index.ts';
import { unreadable, type AdmissionAnswer, type Reviewer } from '../runtime/admission-review.ts';
import type { ReferenceApi } from './ports.ts';
import { misrouted, sandboxStatusUpdate } from './review-routing.ts';

/** How many references a refusal names; the count says the rest. */
const NAMED = 3;

export type RecordedSandbox = {
  readonly namespace: string;
  readonly name: string;
  readonly worktree: string | undefined;
};

/** Pure: the verdict on recording `sandbox` as Exclusive, given a consistent LIST of its references. */
export function judgeExclusiveRecord(
  sandbox: RecordedSandbox,
  listed: readonly Parsed<SessionReference>[],
  limits: IndexLimits,
): AdmissionAnswer {
  const entries = listed.flatMap((parsed) => (parsed.ok ? [referenceEntryOf(parsed.value)] : []));
  const index = buildReferenceIndex(entries, limits);
  const unreadable = listed.flatMap((parsed) => (parsed.ok ? [] : [parsed.error.objectKey]));
  const target = { worktree: sandbox.worktree };
  if (unreadable.length === 0 && !hasForeignReference(index, target)) return { allowed: true };
  const blocking = [...foreignReferences(index, target).map((entry) => entry.name), ...unreadable];
  const named = blocking.slice(0, NAMED).join(', ');
  const more = blocking.length > NAMED ? ` and ${blocking.length - NAMED} more` : '';
  const why = index.overflowed
    ? `its reference index is over its limits (${index.latch.limit}: ${index.latch.observed} > ${index.latch.max})`
    : `${blocking.length} SessionReference(s) foreign to its worktree ${sandbox.worktree ?? 'none'} or unreadable ` +
      `(${named}${more})`;
  return {
    allowed: false,
    code: 409,
    reason: 'Conflict',
    message:
      `sandbox ${sandbox.namespace}/${sandbox.name} has ${why}: the operator records an Exclusive decision only ` +
      'when no other session uses the sandbox; it decides again',
  };
}

export function exclusiveRecordReviewer(
  references: Pick<ReferenceApi, 'listLive'>,
  limits: IndexLimits,
  log: Logger,
): Reviewer {
  return async (request) => {
    const where = sandboxStatusUpdate(request);
    if (where === undefined) return misrouted('decision review', 'a status UPDATE of one Sandbox', request);
    const { namespace, name } = where;
    const parsed = parseSandbox(request.object);
    // A Sandbox that does not parse has no worktree to judge by: the operator decides nothing Exclusive of it.
    if (!parsed.ok)
      return {
        allowed: false,
        code: 409,
        reason: 'Conflict',
        message: `${parsed.error.message}: the operator records an Exclusive decision only of a Sandbox it can read`,
      };
    const sandbox = { namespace, name, worktree: parsed.value.spec.worktree };
    let listed;
    try {
      listed = await references.listLive(namespace, name);
    } catch (error) {
      log.warn(
        { err: error, sandbox: `${namespace}/${name}` },
        'decision review could not list references; refusing',
      );
      return unreadable(`the SessionReferences of sandbox ${namespace}/${name}`, error);
    }
    const verdict = judgeExclusiveRecord(sandbox, listed, limits);
    log.info(
      { sandbox: `${namespace}/${name}`, user: request.userInfo.username, references: listed.length },
      verdict.allowed
        ? 'decision review: no other session uses the sandbox, its Exclusive record admitted'
        : 'decision review: another session uses the sandbox, its Exclusive record refused',
    );
    return verdict;
  };
}
