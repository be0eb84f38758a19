/**
 * The operator's own DELETE of a Sandbox, judged again at admission (docs/adr/0011). The operator-bounds policy
 * lets the operator's identity delete a fenced `DeleteWhenUnreferenced` sandbox, an unclaimed pool sandbox and a
 * sandbox claim's, but a policy sees one object and cannot read its references: a leaked token could raise the
 * fence and delete a referenced one, or delete a claim's sandbox its session still uses. This reviewer reads them
 * — a consistent LIST of the sandbox's SessionReferences, as the cleanup's own (live/cleanup.ts) — and admits
 * the delete when there is none, or when the sandbox is a sandbox claim's and that claim is being deleted (its
 * release, binding/release.ts: the decision then keeps the sandbox for other sessions' references). Its
 * registration (api/operator-review.ts) sends it every sandbox delete of the operator's users.
 *
 * A refusal is a 409: to the cleanup a conflict, which the reconcile retries, and its next turn sees the
 * reference and lifts the fence. A read that fails refuses too (503): uncertainty never admits the delete.
 */
import type { Logger } from 'pino';
import { GROUP, SANDBOX } from '../api/names.ts';
import { unreadable, type AdmissionAnswer, type Reviewer } from '../runtime/admission-review.ts';
import type { ReferenceApi } from './ports.ts';
import { claimLabelOf, type ReviewReads } from './reference-review.ts';

/** How many references a refusal names; the count says the rest. */
const NAMED = 3;

/** Pure: the verdict on deleting `sandbox`, given the names of the references a consistent LIST found. */
export function judgeSandboxDelete(
  sandbox: { readonly namespace: string; readonly name: string },
  references: readonly string[],
): AdmissionAnswer {
  if (references.length === 0) return { allowed: true };
  const more = references.length > NAMED ? ` and ${references.length - NAMED} more` : '';
  return {
    allowed: false,
    code: 409,
    reason: 'Conflict',
    message:
      `sandbox ${sandbox.namespace}/${sandbox.name} still has ${references.length} SessionReference(s) ` +
      `(${references.slice(0, NAMED).join(', ')}${more}): the operator deletes a sandbox only while nothing ` +
      'references it; its cleanup looks again and lifts the fence',
  };
}

export function sandboxDeleteReviewer(
  references: Pick<ReferenceApi, 'listLive'>,
  claims: Pick<ReviewReads, 'claimDeleting'>,
  log: Logger,
): Reviewer {
  return async (request) => {
    const { namespace, name, operation, resource } = request;
    if (
      resource.group !== GROUP ||
      resource.resource !== SANDBOX.plural ||
      operation !== 'DELETE' ||
      namespace === undefined ||
      name === undefined
    )
      return {
        allowed: false,
        code: 400,
        reason: 'BadRequest',
        message:
          `the operator's delete review judges only the DELETE of one Sandbox; it was sent ${operation} of ` +
          `${resource.resource}.${resource.group}: its ValidatingWebhookConfiguration is not the operator's`,
      };
    const sandbox = { namespace, name };
    const claim = claimLabelOf(request.oldObject);
    let listed;
    try {
      if (claim !== undefined && (await claims.claimDeleting(namespace, claim))) {
        log.info(
          { sandbox: `${namespace}/${name}`, user: request.userInfo.username, claim },
          'delete review: its sandbox claim is being deleted, its release’s delete admitted',
        );
        return { allowed: true };
      }
      listed = await references.listLive(namespace, name);
    } catch (error) {
      log.warn(
        { err: error, sandbox: `${namespace}/${name}` },
        'delete review could not read the references or the claim; refusing',
      );
      return unreadable(`the SessionReferences or sandbox claim of sandbox ${namespace}/${name}`, error);
    }
    // A reference that does not parse still counts, named by its key (namespace/name).
    const names = listed.map((reference) =>
      reference.ok ? reference.value.metadata.name : reference.error.objectKey,
    );
    const verdict = judgeSandboxDelete(sandbox, names);
    log.info(
      { sandbox: `${namespace}/${name}`, user: request.userInfo.username, references: names.length },
      verdict.allowed
        ? 'delete review: sandbox unreferenced, its delete admitted'
        : 'delete review: sandbox still referenced, its delete refused',
    );
    return verdict;
  };
}
