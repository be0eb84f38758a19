// The operator's delete review (docs/adr/0011) on the local control plane, as the chart registers it with
// `deleteReview.enabled`: the chart's ValidatingWebhookConfiguration, rendered by helm so its rules and the
// operator users it matches have one home, with one change — the API server reaches the operator process
// `npm start` runs at a URL on loopback (an EndpointSlice may not hold a loopback address, so the chart's
// Service cannot lead there), under a certificate made for 127.0.0.1. failurePolicy Fail: until the operator
// serves it, the operator's own deletes wait; nobody else's are sent to it.
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { loopbackCertificate } from './certificate.ts';
import { renderChart } from './chart.ts';
import type { LocalCluster } from './control-plane.ts';
import { LocalClusterError } from './errors.ts';
import { freePort } from './net.ts';

export type OperatorReview = {
  /** The registration's name. */
  readonly name: string;
  /** The operator's flags that serve the review where the registration points. */
  readonly operatorFlags: readonly string[];
};

type Webhook = {
  readonly name: string;
  readonly clientConfig: { readonly service?: { readonly path?: string }; readonly caBundle?: string };
};
type Registration = {
  readonly kind?: string;
  readonly metadata: { readonly name: string };
  webhooks: Webhook[];
};

const isRegistration = (value: unknown): value is Registration =>
  typeof value === 'object' &&
  value !== null &&
  (value as { kind?: unknown }).kind === 'ValidatingWebhookConfiguration' &&
  Array.isArray((value as { webhooks?: unknown }).webhooks);

/** The chart's registration, each webhook's Service replaced by `url` (same path) and its CA by `caPem`. */
export function atLoopback(rendered: string, url: string, caPem: string): Registration {
  const registration = parseAllDocuments(rendered)
    .map((document) => document.toJS() as unknown)
    .find(isRegistration);
  if (registration === undefined)
    throw new LocalClusterError(
      'operator-review-failed',
      'the chart rendered no ValidatingWebhookConfiguration',
      {
        outputTail: rendered.slice(-2000),
      },
    );
  const caBundle = Buffer.from(caPem, 'utf8').toString('base64');
  return {
    ...registration,
    webhooks: registration.webhooks.map((webhook) => {
      const path = webhook.clientConfig.service?.path;
      if (path === undefined)
        throw new LocalClusterError(
          'operator-review-failed',
          `webhook ${webhook.name} names no Service path`,
        );
      return { ...webhook, clientConfig: { url: `${url}${path}`, caBundle } };
    }),
  };
}

export async function registerOperatorReview(
  cluster: LocalCluster,
  options: { readonly cacheDir?: string } = {},
): Promise<OperatorReview> {
  const rendered = await renderChart({
    templates: ['templates/delete-review.yaml'],
    set: ['deleteReview.enabled=true'],
    ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
  });
  const dir = join(cluster.tempDir, 'operator-review');
  await mkdir(dir, { recursive: true });
  const { certPem } = await loopbackCertificate('operator-review', dir);
  const bind = `127.0.0.1:${await freePort()}`;
  const registration = atLoopback(rendered, `https://${bind}`, certPem);
  const applied = await cluster.kubectl(['apply', '--server-side', '-f', '-'], {
    input: JSON.stringify(registration),
  });
  if (applied.exitCode !== 0)
    throw new LocalClusterError('operator-review-failed', "registering the operator's delete review failed", {
      outputTail: applied.stderr,
    });
  return {
    name: registration.metadata.name,
    operatorFlags: ['--review-bind', bind, '--review-cert-dir', dir],
  };
}
