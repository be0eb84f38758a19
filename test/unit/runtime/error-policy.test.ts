import { describe, expect, it } from 'vitest';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import { controllerErrorOf, errorPolicy, LeaseLostError } from '../../../operator/runtime/error-policy.ts';

const kube = (status: number, step: 'Patch' | 'PatchFinalizers' = 'Patch') =>
  new KubeRequestError(step, 'ns/sbx', status, { cause: new Error(`HTTP ${status}`) });

describe('the error policy', () => {
  it('retries a stale write quietly, from fresh state', () => {
    for (const error of [kube(409), kube(422, 'PatchFinalizers')])
      expect(errorPolicy(controllerErrorOf(error))).toMatchObject({
        kind: 'RetryWithBackoff',
        level: 'info',
      });
  });

  it('retries any other failed request with backoff, as a warning', () => {
    expect(errorPolicy(controllerErrorOf(kube(500)))).toMatchObject({
      kind: 'RetryWithBackoff',
      level: 'warn',
    });
    expect(errorPolicy(controllerErrorOf(kube(422)))).toMatchObject({
      kind: 'RetryWithBackoff',
      level: 'warn',
    });
  });

  it('takes a TypeError for our own bug: retried, logged as an error', () => {
    const error = controllerErrorOf(new TypeError('x is undefined'));
    expect(error.kind).toBe('Bug');
    expect(errorPolicy(error)).toMatchObject({ kind: 'RetryWithBackoff', level: 'error' });
  });

  it('stops on a lost lease, which keeps the renew failure as its cause', () => {
    const renew = kube(503);
    const lost = new LeaseLostError('ns/lease', 10_000, { cause: renew });
    expect(lost.cause).toBe(renew);
    expect(lost.message).toBe('leader election lost: lease ns/lease not renewed within 10000 ms');
    expect(errorPolicy(controllerErrorOf(lost)).kind).toBe('Terminal');
  });

  it('keeps anything else thrown as Unexpected and retries it', () => {
    const error = controllerErrorOf('a string');
    expect(error).toEqual({ kind: 'Unexpected', error: 'a string' });
    expect(errorPolicy(error)).toMatchObject({ kind: 'RetryWithBackoff', level: 'warn' });
  });
});
