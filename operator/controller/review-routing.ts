/**
 * What the operator's reviews are sent (api/operator-review.ts registers them), and their one answer to anything
 * else: a 400 naming what the review judges and what came. Never admitted, so a registration edited to send a
 * review more than it judges refuses those writes rather than passing them unjudged.
 */
import { GROUP, SANDBOX } from '../api/names.ts';
import type { AdmissionAnswer, AdmissionRequest } from '../runtime/admission-review.ts';

export function misrouted(review: string, judges: string, request: AdmissionRequest): AdmissionAnswer {
  const subresource = request.subResource === undefined ? '' : `/${request.subResource}`;
  return {
    allowed: false,
    code: 400,
    reason: 'BadRequest',
    message:
      `the operator's ${review} judges only ${judges}; it was sent ` +
      `${request.operation} of ${request.resource.resource}.${request.resource.group}${subresource}`,
  };
}

/** A status UPDATE of one Sandbox: where it is; undefined for any other request. */
export function sandboxStatusUpdate(
  request: AdmissionRequest,
): { namespace: string; name: string } | undefined {
  const { namespace, name, operation, resource } = request;
  if (
    resource.group !== GROUP ||
    resource.resource !== SANDBOX.plural ||
    request.subResource !== 'status' ||
    operation !== 'UPDATE' ||
    namespace === undefined ||
    name === undefined
  )
    return undefined;
  return { namespace, name };
}
