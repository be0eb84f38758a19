/**
 * The API server's side of metrics-access.ts: a TokenReview and a SubjectAccessReview, both `create` on
 * cluster-scoped review kinds (the chart grants them only with `metrics.authentication.enabled`). A failed
 * request rejects (KubeRequestError), which the endpoint answers with 500: it fails closed.
 */
import { z } from 'zod';
import { request } from '../kube/errors.ts';
import type { JsonClient } from '../kube/plain-json.ts';
import type { AccessReviews, ReviewedUser } from './metrics-access.ts';

// The few fields read; anything else in the answers is ignored.
const tokenReviewSchema = z.object({
  status: z
    .object({
      authenticated: z.boolean().optional(),
      user: z
        .object({
          username: z.string().optional(),
          uid: z.string().optional(),
          groups: z.array(z.string()).optional(),
          extra: z.record(z.string(), z.array(z.string())).optional(),
        })
        .optional(),
    })
    .optional(),
});
const accessReviewSchema = z.object({
  status: z
    .object({
      allowed: z.boolean().optional(),
      denied: z.boolean().optional(),
      reason: z.string().optional(),
    })
    .optional(),
});

export function kubeAccessReviews(json: JsonClient): AccessReviews {
  return {
    async authenticate(token) {
      const answer = await request('Create', 'tokenreview', () =>
        json({
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/tokenreviews',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        }),
      );
      const status = tokenReviewSchema.parse(answer).status;
      const username = status?.user?.username;
      if (status?.authenticated !== true || username === undefined || username === '') return undefined;
      const { uid, groups = [], extra } = status.user ?? {};
      return { username, groups, ...(uid === undefined ? {} : { uid }), ...(extra ? { extra } : {}) };
    },
    async authorize(user: ReviewedUser, path, verb) {
      const answer = await request('Create', 'subjectaccessreview', () =>
        json({
          method: 'POST',
          path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: user.username,
              uid: user.uid,
              groups: user.groups,
              extra: user.extra,
              nonResourceAttributes: { path, verb },
            },
          },
        }),
      );
      const status = accessReviewSchema.parse(answer).status;
      return { allowed: status?.allowed === true && status.denied !== true, reason: status?.reason ?? '' };
    },
  };
}
