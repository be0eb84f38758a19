/**
 * The /metrics guard's own rules (metrics-access.ts): which header counts as a token, that the token is
 * reviewed once and the verdict reused until its time is up (allowed longer than refused), and that a failed
 * review is not remembered. The API server's answers themselves: test/integration/runtime/metrics-access.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  metricsGuard,
  type AccessReviews,
  type ReviewedUser,
} from '../../../operator/runtime/metrics-access.ts';

/** Tokens `reader` (allowed), `stranger` (authenticated, not allowed); anything else unknown. */
function fakeReviews() {
  const asked: string[] = [];
  let failing = false;
  const reviews: AccessReviews = {
    authenticate(token) {
      asked.push(`authn ${token}`);
      if (failing) return Promise.reject(new Error('API server unavailable'));
      const users: Record<string, ReviewedUser> = {
        reader: { username: 'reader', groups: [] },
        stranger: { username: 'stranger', groups: [] },
      };
      return Promise.resolve(users[token]);
    },
    authorize(user, path, verb) {
      asked.push(`authz ${user.username} ${verb} ${path}`);
      return Promise.resolve({ allowed: user.username === 'reader', reason: 'no RBAC rule' });
    },
  };
  return { reviews, asked, fail: (value: boolean) => (failing = value) };
}

describe('the /metrics guard', () => {
  it('answers 401 without a bearer token, asking nobody', async () => {
    const { reviews, asked } = fakeReviews();
    const guard = metricsGuard(reviews);
    for (const header of [undefined, '', 'Basic cmVhZGVyOng=', 'Bearer', 'Bearer  '])
      expect((await guard(header)).code).toBe(401);
    expect(asked).toEqual([]);
  });

  it('asks for get on /metrics of the user the token names: 200, 403, 401', async () => {
    const { reviews, asked } = fakeReviews();
    const guard = metricsGuard(reviews);
    expect(await guard('Bearer reader')).toEqual({ code: 200, user: 'reader' });
    expect(await guard('bearer stranger')).toEqual({
      code: 403,
      reason: 'stranger may not get /metrics: no RBAC rule',
    });
    expect((await guard('Bearer forged')).code).toBe(401);
    expect(asked).toEqual([
      'authn reader',
      'authz reader get /metrics',
      'authn stranger',
      'authz stranger get /metrics',
      'authn forged',
    ]);
  });

  it('reuses an allowed verdict for a minute and a refusal for ten seconds', async () => {
    const { reviews, asked } = fakeReviews();
    let now = 1_000_000;
    const guard = metricsGuard(reviews, { now: () => now });
    await guard('Bearer reader');
    await guard('Bearer stranger');
    now += 9_999;
    await guard('Bearer reader');
    await guard('Bearer stranger');
    expect(asked.filter((q) => q.startsWith('authn'))).toEqual(['authn reader', 'authn stranger']);
    now += 2;
    await guard('Bearer stranger');
    await guard('Bearer reader');
    expect(asked.filter((q) => q.startsWith('authn'))).toEqual([
      'authn reader',
      'authn stranger',
      'authn stranger',
    ]);
    now += 60_000;
    await guard('Bearer reader');
    expect(asked.filter((q) => q === 'authn reader')).toHaveLength(2);
  });

  it('remembers no verdict of a review that failed, and keeps at most maxTokens', async () => {
    const { reviews, asked, fail } = fakeReviews();
    const guard = metricsGuard(reviews, { maxTokens: 2 });
    fail(true);
    await expect(guard('Bearer reader')).rejects.toThrow('API server unavailable');
    fail(false);
    expect((await guard('Bearer reader')).code).toBe(200);
    await guard('Bearer stranger');
    await guard('Bearer forged');
    await guard('Bearer reader');
    expect(asked.filter((q) => q === 'authn reader')).toHaveLength(3);
  });
});
