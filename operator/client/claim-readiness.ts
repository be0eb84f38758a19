/**
 * Whether a SandboxClaim as read is ready to use, pure: bound (status.sandbox and status.reference set, the
 * reference being there from the bind) and Ready=True. Otherwise what it waits for, in the words of its
 * conditions, for the error a deadline raises. Every client judges alike.
 */

export type ClaimLaunchType = 'Warm' | 'Cold';

export type ClaimReadiness =
  | {
      readonly kind: 'Ready';
      readonly sandbox: string;
      readonly reference: string;
      readonly launchType: ClaimLaunchType;
    }
  /** Not yet; `seen` says what the conditions say (e.g. "Bound False WarmPoolNotFound: …"). */
  | { readonly kind: 'Waiting'; readonly seen: string }
  | { readonly kind: 'Deleting' }
  | { readonly kind: 'Gone' };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function judgeClaim(body: unknown): ClaimReadiness {
  if (body === undefined) return { kind: 'Gone' };
  const object = isRecord(body) ? body : {};
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  if ((metadata['deletionTimestamp'] ?? undefined) !== undefined) return { kind: 'Deleting' };
  const status = isRecord(object['status']) ? object['status'] : {};
  const conditions = Array.isArray(status['conditions']) ? status['conditions'].filter(isRecord) : [];
  const condition = (type: string) => conditions.find((c) => c['type'] === type);
  const sandbox = text(status['sandbox']);
  const reference = text(status['reference']);
  const launchType = text(status['launchType']);
  const ready = condition('Ready');
  if (
    sandbox !== undefined &&
    reference !== undefined &&
    (launchType === 'Warm' || launchType === 'Cold') &&
    ready?.['status'] === 'True'
  )
    return { kind: 'Ready', sandbox, reference, launchType };
  const said = (['Bound', 'Ready'] as const).flatMap((type) => {
    const found = condition(type);
    if (found === undefined) return [];
    const reason = text(found['reason']) ?? '';
    const message = text(found['message']);
    return [`${type} ${text(found['status']) ?? '?'} ${reason}${message ? `: ${message}` : ''}`];
  });
  return { kind: 'Waiting', seen: said.length === 0 ? 'no conditions yet' : said.join('; ') };
}
