/**
 * The operator's delete review (controller/delete-review.ts, controller/reference-review.ts) and its reviews of
 * Exclusive records (controller/decision-review.ts) and legacy markers (controller/marker-review.ts), served when `--review-bind` is given: HTTPS with
 * `--review-cert-dir`'s tls.crt and tls.key, on a listener of its own (the API server calls it; the kubelet's
 * probes and the scrapers never do). Its registration is api/operator-review.ts.
 */
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import {
  EXCLUSIVE_RECORD_REVIEW_PATH,
  LEGACY_MARKER_REVIEW_PATH,
  REFERENCE_DELETE_REVIEW_PATH,
  SANDBOX_DELETE_REVIEW_PATH,
} from '../../api/operator-review.ts';
import type { IndexLimits } from '../../api/limits.ts';
import { reviewRoute } from '../../runtime/admission-review.ts';
import { listen, readServingCertificate } from '../../runtime/listener.ts';
import { exclusiveRecordReviewer } from '../decision-review.ts';
import { sandboxDeleteReviewer } from '../delete-review.ts';
import { legacyMarkerReviewer } from '../marker-review.ts';
import type { ReferenceApi } from '../ports.ts';
import { referenceDeleteReviewer, type ReviewReads } from '../reference-review.ts';
import type { OperatorConfig } from './config.ts';
import { admissionWalk } from './legacy-lane.ts';

export async function serveReview(
  config: OperatorConfig,
  references: Pick<ReferenceApi, 'listLive'>,
  reads: ReviewReads,
  limits: IndexLimits,
  log: Logger,
): Promise<Server | undefined> {
  const { reviewBind, reviewCertDir } = config;
  if (reviewBind === undefined || reviewCertDir === undefined) return undefined;
  const tls = readServingCertificate(reviewCertDir);
  const reviewLog = log.child({ component: 'delete-review' });
  const routes = [
    reviewRoute(SANDBOX_DELETE_REVIEW_PATH, sandboxDeleteReviewer(references, reads, reviewLog), reviewLog),
    reviewRoute(REFERENCE_DELETE_REVIEW_PATH, referenceDeleteReviewer(reads, reviewLog), reviewLog),
    reviewRoute(
      EXCLUSIVE_RECORD_REVIEW_PATH,
      exclusiveRecordReviewer(references, limits, reviewLog),
      reviewLog,
    ),
    reviewRoute(LEGACY_MARKER_REVIEW_PATH, legacyMarkerReviewer(admissionWalk(config), reviewLog), reviewLog),
  ];
  const paths = [
    SANDBOX_DELETE_REVIEW_PATH,
    REFERENCE_DELETE_REVIEW_PATH,
    EXCLUSIVE_RECORD_REVIEW_PATH,
    LEGACY_MARKER_REVIEW_PATH,
  ].join(', ');
  return listen(reviewBind, routes, `the delete review on ${paths}`, log, tls);
}
