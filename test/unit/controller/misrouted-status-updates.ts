/**
 * Requests the registration of a review of Sandbox status UPDATEs never sends it (api/operator-review.ts), each
 * with the words its refusal names it by: the decision and the marker reviews both answer every one with a 400.
 */
import type { AdmissionRequest } from '../../../operator/runtime/admission-review.ts';

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
