/**
 * What the controller does with a misconfiguration the runner met: it remembers it for the status writer,
 * and an admission refusal gets the fix for this operator's own identity.
 */
import { describe, expect, it } from 'vitest';
import { admissionFix, judgeIdentity } from '../../../operator/controller/wiring/identity.ts';
import {
  Misconfigurations,
  observingMisconfigurations,
} from '../../../operator/controller/misconfiguration.ts';

const params = { namespace: 'sandbox-system', name: 'sandbox-pod-protection' };
const refusal = {
  reason: 'AdmissionRefused',
  refused: 'Create pod ns/sbx-0 failed with HTTP 403: …',
  fix: 'policy says',
};

describe('a misconfiguration the runner met', () => {
  it('is remembered, with the identity fix for an admission refusal, until resolved', () => {
    const memory = new Misconfigurations();
    const verdict = judgeIdentity('dev', 'system:serviceaccount:sandbox-system:sandbox-operator', params);
    const observer = observingMisconfigurations({}, memory, () => admissionFix(verdict, params));
    const said = observer.onMisconfigured?.('ns/sbx', refusal);
    expect(said).toMatchObject({ reason: 'AdmissionRefused' });
    expect(said ? said.fix : '').toContain(
      `kubectl patch configmap sandbox-pod-protection -n sandbox-system --type merge -p '{"data":{"operatorUsers":"system:serviceaccount:sandbox-system:sandbox-operator,dev"}}'`,
    );
    expect(memory.of('ns/sbx')).toEqual(said);
    observer.onReconfigured?.('ns/sbx');
    expect(memory.of('ns/sbx')).toBe('Resolved');
    memory.forget('ns/sbx');
    expect(memory.of('ns/sbx')).toBeUndefined();
  });

  it('keeps the runner’s fix for other refusals, and names the identity when the policy could not be read', () => {
    const memory = new Misconfigurations();
    const observer = observingMisconfigurations({}, memory, () => 'identity fix');
    const rbac = { ...refusal, reason: 'RBACForbidden', fix: 'grant dev "create" on pods' };
    expect(observer.onMisconfigured?.('ns/sbx', rbac)).toEqual(rbac);
    expect(admissionFix({ kind: 'Unverified', user: 'dev', reason: 'forbidden' }, params)).toContain(
      'add "dev" to data.operatorUsers (comma-separated) of ConfigMap sandbox-system/sandbox-pod-protection',
    );
    expect(admissionFix({ kind: 'Trusted', user: 'dev' }, params)).toBeUndefined();
  });
});
