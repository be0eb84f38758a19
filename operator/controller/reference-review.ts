/**
 * The operator's own DELETE of a SessionReference, judged again at admission (docs/adr/0011). The operator deletes
 * references on four paths, and each is one of these: its worktree's own references (the prune of its
 * tombstones, the erase of an Exclusive sandbox's index: an own reference never decides a verdict), every
 * reference of a sandbox an administrator asked to erase (`erase-references`, which only administrators may set),
 * a sandbox claim's own reference (its release, the binding's withdraw: `claimMayForget`), and references whose
 * sandbox is gone or no longer decides (the late ones an Exclusive release leaves, deletion/late-references.ts). A foreign reference of a standing sandbox is
 * none of them: deleting it would make a shared sandbox look exclusive, which is what a leaked token would do.
 *
 * Every fact is read live (the reference as the API server sends it, the Sandbox and the claim by a GET); a
 * read that fails refuses (503): uncertainty never admits the delete. A refusal is a 409 the caller's retry sees.
 */
import type { Logger } from 'pino';
import { ANNOTATIONS, GROUP, LABELS, SESSION_REFERENCE } from '../api/names.ts';
import { parseSessionReference } from '../api/parse.ts';
import { isForeignReference } from '../exclusivity/foreign.ts';
import {
  unreadable,
  type AdmissionAnswer,
  type AdmissionRequest,
  type Reviewer,
} from '../runtime/admission-review.ts';
import { decidesItself } from './incarnation.ts';
import { pendingEraseOf } from './lifecycle.ts';
import type { LiveSandbox, SandboxApi } from './ports.ts';
import { misrouted } from './review-routing.ts';

/** What the review reads besides the request: the Sandbox by a live GET, and whether a sandbox claim is deleting. */
export interface ReviewReads {
  readonly sandboxes: Pick<SandboxApi, 'readLive'>;
  /** True only when the claim exists and carries a deletionTimestamp. */
  claimDeleting(namespace: string, name: string): Promise<boolean>;
}

/** The reference being deleted, as the request's oldObject says; `worktree` undefined when it has none. */
export type ReviewedReference = {
  readonly namespace: string;
  readonly name: string;
  readonly sandbox: string;
  readonly worktree: string | undefined;
  /** False when it does not parse: then it counts as foreign, as the decision counts it. */
  readonly readable: boolean;
  readonly claim: string | undefined;
};

export type ReferenceDeleteFacts = {
  readonly reference: ReviewedReference;
  readonly sandbox: LiveSandbox | undefined;
  readonly claimDeleting: boolean;
};

/** Pure: the verdict on deleting a reference, from what was read. */
export function judgeReferenceDelete(facts: ReferenceDeleteFacts): AdmissionAnswer {
  const { reference, sandbox, claimDeleting } = facts;
  if (!decidesItself(sandbox)) return { allowed: true };
  // Its own worktree's while it is being deleted: the prune and the erase of an Exclusive index. An own
  // reference never decides a verdict, but it keeps a `DeleteWhenUnreferenced` sandbox from its cleanup.
  const own =
    reference.readable &&
    !isForeignReference({ worktree: reference.worktree }, { worktree: sandbox.worktree });
  if (own && sandbox.deleting) return { allowed: true };
  // An administrator's erase not yet acted on: once the status records it, the annotation admits nothing
  // (the operator bounds keep a token from clearing that record).
  if (
    pendingEraseOf({
      request: sandbox.eraseRequest,
      erasedFor: sandbox.erasedFor,
      statusWritten: sandbox.statusWritten,
    }) !== undefined
  )
    return { allowed: true };
  if (reference.claim !== undefined && claimMayForget(reference.claim, sandbox, claimDeleting))
    return { allowed: true };
  const key = `${reference.namespace}/${reference.name}`;
  const of = `sandbox ${reference.namespace}/${reference.sandbox}`;
  const subject = own
    ? `sessionreference ${key} is of ${of}'s own worktree (${String(reference.worktree)}), which is not being ` +
      'deleted'
    : `sessionreference ${key} is foreign to ${of} (worktree ${reference.worktree ?? 'none'}` +
      `${reference.readable ? '' : ', unreadable'}; the sandbox's ${sandbox.worktree ?? 'none'}), which still stands`;
  return {
    allowed: false,
    code: 409,
    reason: 'Conflict',
    message:
      `${subject}: the operator deletes a reference of a standing sandbox only when it is its own worktree's and ` +
      `the sandbox is being deleted, on an administrator's ${ANNOTATIONS.eraseReferences} not yet acted on, or as a sandbox ` +
      'claim’s own when the claim is deleted or its sandbox is not the claim’s or is being deleted',
  };
}

/**
 * A sandbox claim's own reference (labelled with it; only the operator writes that label) goes with the claim's
 * release, or when the binding withdraws it: from a sandbox that is not that claim's (a bind that lost its race)
 * or that is being deleted. Never from the claim's bound, standing sandbox: with it gone, a leaked token's delete
 * of the sandbox would find it unreferenced (delete-review.ts).
 */
function claimMayForget(claim: string, sandbox: LiveSandbox, claimDeleting: boolean): boolean {
  return claimDeleting || sandbox.claim !== claim || sandbox.deleting;
}

type Unread = { metadata?: { labels?: Record<string, unknown> }; spec?: Record<string, unknown> } | undefined;
const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;
const specText = (object: unknown, field: string) => text((object as Unread)?.spec?.[field]);

/** The sandbox claim an object's labels name (the label only the operator writes), from a raw object. */
export const claimLabelOf = (object: unknown): string | undefined =>
  text((object as Unread)?.metadata?.labels?.[LABELS.sandboxClaim]);

/** The reference from the request's oldObject; undefined when not even its sandbox can be read. */
export function reviewedReference(request: AdmissionRequest): ReviewedReference | undefined {
  const { namespace, name, oldObject } = request;
  const sandbox = specText(oldObject, 'sandbox');
  if (namespace === undefined || name === undefined || sandbox === undefined) return undefined;
  const parsed = parseSessionReference(oldObject);
  return {
    namespace,
    name,
    sandbox,
    worktree: parsed.ok ? parsed.value.spec.worktree : specText(oldObject, 'worktree'),
    readable: parsed.ok,
    claim: claimLabelOf(oldObject),
  };
}

const JUDGES = 'the DELETE of one SessionReference naming its sandbox';

export function referenceDeleteReviewer(reads: ReviewReads, log: Logger): Reviewer {
  return async (request) => {
    const { resource, operation } = request;
    if (resource.group !== GROUP || resource.resource !== SESSION_REFERENCE.plural || operation !== 'DELETE')
      return misrouted('reference review', JUDGES, request);
    const reference = reviewedReference(request);
    if (reference === undefined) return misrouted('reference review', JUDGES, request);
    const key = `${reference.namespace}/${reference.name}`;
    let facts: ReferenceDeleteFacts;
    try {
      const sandbox = await reads.sandboxes.readLive(reference.namespace, reference.sandbox);
      const { claim } = reference;
      const claimDeleting = claim !== undefined && (await reads.claimDeleting(reference.namespace, claim));
      facts = { reference, sandbox, claimDeleting };
    } catch (error) {
      log.warn(
        { err: error, reference: key },
        'reference review could not read its sandbox or claim; refusing',
      );
      return unreadable(`what decides the delete of sessionreference ${key}`, error);
    }
    const verdict = judgeReferenceDelete(facts);
    log.info(
      {
        reference: key,
        sandbox: reference.sandbox,
        user: request.userInfo.username,
        sandboxStands: decidesItself(facts.sandbox),
      },
      verdict.allowed
        ? 'reference review: not a standing sandbox’s foreign reference, its delete admitted'
        : 'reference review: a standing sandbox’s foreign reference, its delete refused',
    );
    return verdict;
  };
}
