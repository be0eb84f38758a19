/** The start-up check that the operator bounds admit the reaper image this operator injects (issue 26 #1). */
import { describe, expect, it } from 'vitest';
import { reaperImageAdvice } from '../../../operator/controller/wiring/reaper-image.ts';

const params = { namespace: 'sandbox-system', name: 'sandbox-operator-admission' };
const IMAGE = 'registry.example/operator@sha256:1';

describe('reaperImageAdvice', () => {
  it('is silent when no image is listed (any passes) or when the injected one is', () => {
    expect(reaperImageAdvice(IMAGE, undefined, params)).toBeUndefined();
    expect(reaperImageAdvice(IMAGE, '', params)).toBeUndefined();
    expect(reaperImageAdvice(IMAGE, `registry.example/operator@sha256:0,${IMAGE}`, params)).toBeUndefined();
  });

  it('names the listed images, the injected one and both fixes when it is left out', () => {
    const advice = reaperImageAdvice(IMAGE, 'registry.example/operator@sha256:0', params) ?? '';
    expect(advice).toContain('[registry.example/operator@sha256:0]');
    expect(advice).toContain(`this operator injects ${IMAGE}`);
    expect(advice).toContain('--sidecar-image');
    expect(advice).toContain(
      `kubectl patch configmap sandbox-operator-admission -n sandbox-system --type merge -p '{"data":{"reaperImages":"registry.example/operator@sha256:0,${IMAGE}"}}'`,
    );
  });
});
