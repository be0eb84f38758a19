/**
 * The requests the reviews of Sandbox status UPDATEs (the decision and the marker reviews) are sent: the operator's
 * status UPDATE of Sandbox ns/sbx, and those their registration never sends them (api/operator-review.ts), each
 * with the words its refusal names it by (both answer every one with a 400).
 */
import type { AdmissionRequest } from '../../../operator/runtime/admission-review.ts';

export const OPERATOR = 'system:serviceaccount:sandbox-system:sandbox-operator';

/** The operator's status UPDATE of Sandbox ns/sbx, with `fields` (object, oldObject, or a misrouting). */
export const statusUpdateRequest = (fields: Partial<AdmissionRequest>): AdmissionRequest => ({
  uid: 'u-1',
  operation: 'UPDATE',
  namespace: 'ns',
  name: 'sbx',
  resource: { group: 'sandbox.agents.dev', resource: 'sandboxes' },
  subResource: 'status',
  userInfo: { username: OPERATOR },
  ...fields,
});

export const MISROUTED_STATUS_UPDATES: readonly (readonly [string, Partial<AdmissionRequest>, string])[] = [
  ['a DELETE', { operation: 'DELETE' }, 'DELETE of sandboxes.sandbox.agents.dev/status'],
  ['the main resource', { subResource: undefined }, 'UPDATE of sandboxes.sandbox.agents.dev'],
  [
    'a reference',
    { resource: { group: 'sandbox.agents.dev', resource: 'sessionreferences' } },
    'UPDATE of sessionreferences.sandbox.agents.dev/status',
  ],
  [
    'another group',
    { resource: { group: 'apps', resource: 'sandboxes' } },
    'UPDATE of sandboxes.apps/status',
  ],
  ['no name', { name: undefined }, 'UPDATE of sandboxes.sandbox.agents.dev/status'],
  ['no namespace', { namespace: undefined }, 'UPDATE of sandboxes.sandbox.agents.dev/status'],
];
