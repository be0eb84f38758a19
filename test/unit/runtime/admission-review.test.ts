/** The admission webhook's wire (runtime/admission-review.ts): what it reads, what it refuses, how it answers. */
import { describe, expect, it } from 'vitest';
import { parseReview, reviewResponse } from '../../../operator/runtime/admission-review.ts';

const review = (request: object) =>
  JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
const request = {
  uid: 'c0ffee',
  operation: 'DELETE',
  namespace: 'team-a',
  name: 'shared',
  resource: { group: 'sandbox.agents.dev', version: 'v1alpha1', resource: 'sandboxes' },
  userInfo: { username: 'system:serviceaccount:sandbox-system:sandbox-operator', groups: ['a'] },
  oldObject: { kind: 'Sandbox' },
  dryRun: false,
};

describe('an AdmissionReview read', () => {
  it('keeps the fields a reviewer reads, and the rest of the request as sent', () => {
    const parsed = parseReview(review(request));
    expect(parsed).toEqual({ ok: true, request });
  });

  it('is refused, naming why, when it is not JSON, not a v1 review, or has no uid', () => {
    expect(parseReview('{')).toMatchObject({ ok: false, error: expect.stringMatching(/^not JSON/) });
    const v1beta1 = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1beta1',
      kind: 'AdmissionReview',
      request,
    });
    expect(parseReview(v1beta1)).toMatchObject({ ok: false, error: expect.stringContaining('apiVersion') });
    expect(parseReview(review({ ...request, uid: '' }))).toMatchObject({
      ok: false,
      error: expect.stringContaining('request.uid'),
    });
    const { resource: _, ...noResource } = request;
    expect(parseReview(review(noResource))).toMatchObject({
      ok: false,
      error: expect.stringContaining('request.resource'),
    });
  });
});

describe('an AdmissionReview answered', () => {
  it('carries the request’s uid, and a refusal its code, reason and message', () => {
    expect(reviewResponse('c0ffee', { allowed: true })).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'c0ffee', allowed: true },
    });
    const refused = { allowed: false, code: 409, reason: 'Conflict', message: 'still referenced' } as const;
    expect(reviewResponse('c0ffee', refused)).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'c0ffee',
        allowed: false,
        status: { code: 409, reason: 'Conflict', message: 'still referenced' },
      },
    });
  });
});
