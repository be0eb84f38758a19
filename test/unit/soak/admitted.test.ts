/** Invariant 15, operator-admitted: the judge of the operator's own pod creates (test/soak/admitted.ts). */
import { describe, expect, it } from 'vitest';
import { refusedOperatorPods } from '../../soak/admitted.ts';
import { event, OPERATOR } from './audit-fixtures.ts';

const DENIED =
  "pods \"sbx-b-0\" is forbidden: ValidatingAdmissionPolicy 'sandbox-operator-bounds.sandbox.agents.dev' with binding 'sandbox-operator-bounds.sandbox.agents.dev' denied request: the shell reaper runs only the command node dist/bundle/sidecar.mjs";
const TERMINATING =
  'pods "sbx-b-0" is forbidden: unable to create new content in namespace soak-test-0 because it is being terminated';
const judge = (events: Parameters<typeof refusedOperatorPods>[0]) =>
  refusedOperatorPods(events, OPERATOR, (e) => e.auditID).map((v) => v.signature);

describe('operator-admitted', () => {
  it('names a pod create of the operator that an admission policy refused', () =>
    expect(
      judge([
        event(10, 'create', 'pods', 'sbx-b-0', 403, OPERATOR, {
          responseStatus: { code: 403, message: DENIED },
        }),
      ]),
    ).toEqual(['operator-admitted/operator/refused']));

  it('passes the operator’s admitted creates, a terminating namespace’s refusal, and other users’ refusals', () =>
    expect(
      judge([
        event(10, 'create', 'pods', 'sbx-b-0', 201, OPERATOR),
        event(20, 'create', 'pods', 'sbx-b-1', 403, OPERATOR, {
          responseStatus: { code: 403, message: TERMINATING },
        }),
        event(30, 'create', 'pods', 'sbx-b-0', 403, 'admin', {
          responseStatus: { code: 403, message: DENIED },
        }),
        event(40, 'create', 'eviction', 'sbx-b-0', 403, OPERATOR, {
          responseStatus: { code: 403, message: DENIED },
        }),
      ]),
    ).toEqual([]));
});
