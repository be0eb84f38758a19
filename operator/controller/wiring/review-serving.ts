/**
 * The operator's delete review (controller/delete-review.ts), served when `--review-bind` is given: HTTPS with
 * `--review-cert-dir`'s tls.crt and tls.key, on a listener of its own (the API server calls it; the kubelet's
 * probes and the scrapers never do). Its registration is api/operator-review.ts.
 */
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { SANDBOX_DELETE_REVIEW_PATH } from '../../api/operator-review.ts';
import { reviewRoute } from '../../runtime/admission-review.ts';
import { listen, readServingCertificate } from '../../runtime/listener.ts';
import { sandboxDeleteReviewer } from '../delete-review.ts';
import type { ReferenceApi } from '../ports.ts';
import type { OperatorConfig } from './config.ts';

export async function serveReview(
  config: OperatorConfig,
  references: Pick<ReferenceApi, 'listLive'>,
  log: Logger,
): Promise<Server | undefined> {
  const { reviewBind, reviewCertDir } = config;
  if (reviewBind === undefined || reviewCertDir === undefined) return undefined;
  const tls = readServingCertificate(reviewCertDir);
  const reviewLog = log.child({ component: 'delete-review' });
  const route = reviewRoute(
    SANDBOX_DELETE_REVIEW_PATH,
    sandboxDeleteReviewer(references, reviewLog),
    reviewLog,
  );
  return listen(reviewBind, [route], `the delete review on ${SANDBOX_DELETE_REVIEW_PATH}`, log, tls);
}
