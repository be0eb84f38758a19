/**
 * Who may read /metrics when it is served off loopback with `--metrics-auth`: the scraper's bearer token is
 * reviewed by the API server (TokenReview) and the user it names must be allowed `get` on the non-resource
 * URL /metrics (SubjectAccessReview). That is controller-runtime's filters.WithAuthenticationAndAuthorization,
 * so a kubebuilder operator's `metrics-reader` ClusterRole grants the same here (docs/security.md).
 * Verdicts are cached by the token's hash, allowed ones longer than refused ones, as client-go's delegating
 * authorizer does: a scrape every 15 s asks the API server about once a minute.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** The identity a TokenReview vouched for. */
export type ReviewedUser = {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
};

/** The two questions to the API server (adapter: access-reviews.ts). */
export interface AccessReviews {
  /** The token's user, or undefined when the API server does not authenticate it. */
  authenticate(token: string): Promise<ReviewedUser | undefined>;
  /** Whether `user` may `verb` the non-resource URL `path`, and the authorizer's reason. */
  authorize(user: ReviewedUser, path: string, verb: string): Promise<{ allowed: boolean; reason: string }>;
}

export type MetricsVerdict =
  { readonly code: 200; readonly user: string } | { readonly code: 401 | 403; readonly reason: string };

/** Answers one scrape's Authorization header; rejects only when a review could not be asked (fail closed). */
export type MetricsGuard = (authorization: string | undefined) => Promise<MetricsVerdict>;

export const METRICS_PATH = '/metrics';
export const METRICS_VERB = 'get';

export type GuardOptions = {
  /** How long an allowed verdict stands (default 60 s). */
  readonly allowedTtlMs?: number;
  /** How long a 401 or 403 stands (default 10 s): a newly granted reader waits no longer than this. */
  readonly refusedTtlMs?: number;
  /** Distinct tokens remembered (default 1024): a flood of made-up tokens cannot grow memory. */
  readonly maxTokens?: number;
  readonly now?: () => number;
};

const BEARER = /^Bearer +(\S+)$/i;

export function metricsGuard(reviews: AccessReviews, options: GuardOptions = {}): MetricsGuard {
  const { allowedTtlMs = 60_000, refusedTtlMs = 10_000, maxTokens = 1024, now = () => Date.now() } = options;
  const cache = new LRUCache<string, MetricsVerdict>({
    max: maxTokens,
    ttl: allowedTtlMs,
    ttlResolution: 0,
    perf: { now },
  });
  return async (authorization) => {
    const token = BEARER.exec(authorization ?? '')?.[1];
    if (token === undefined) return { code: 401, reason: 'a bearer token is required' };
    // The token itself is never kept: only its hash names the cached verdict.
    const key = createHash('sha256').update(token).digest('hex');
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const verdict = await review(reviews, token);
    cache.set(key, verdict, { ttl: verdict.code === 200 ? allowedTtlMs : refusedTtlMs });
    return verdict;
  };
}

async function review(reviews: AccessReviews, token: string): Promise<MetricsVerdict> {
  const user = await reviews.authenticate(token);
  if (user === undefined) return { code: 401, reason: 'the token is not authenticated' };
  const { allowed, reason } = await reviews.authorize(user, METRICS_PATH, METRICS_VERB);
  if (allowed) return { code: 200, user: user.username };
  const why = reason === '' ? '' : `: ${reason}`;
  return {
    code: 403,
    reason: `${user.username} may not ${METRICS_VERB} ${METRICS_PATH}${why}`,
  };
}
