/**
 * The registration of the operator's delete review (docs/adr/0011): a ValidatingWebhookConfiguration that sends
 * the operator's own users' deletes to the operator, judged again from live reads:
 * - a Sandbox's DELETE (controller/delete-review.ts): its cleanup's, a warm pool's, a claim's release;
 * - a SessionReference's DELETE (controller/reference-review.ts);
 * - a Sandbox status UPDATE that records an Exclusive decision (controller/decision-review.ts), which the
 *   deletion takes as final;
 * - a Sandbox status UPDATE that marks an adopted sandbox (controller/marker-review.ts), after which the index
 *   alone decides.
 * Tenants' writes never reach it.
 *
 * `failurePolicy: Fail`: an operator that cannot answer its own review cannot delete — only the operator waits,
 * and it is the one asking. The matching is in `matchConditions` (CEL on the request), so the API server calls
 * the webhook for nothing else.
 */
import { ANNOTATIONS, GROUP, SANDBOX, SESSION_REFERENCE } from './names.ts';

export const OPERATOR_REVIEW_WEBHOOK = `sandbox-deletes.operator-review.${GROUP}`;
export const REFERENCE_REVIEW_WEBHOOK = `reference-deletes.operator-review.${GROUP}`;
export const DECISION_REVIEW_WEBHOOK = `exclusive-decisions.operator-review.${GROUP}`;
export const MARKER_REVIEW_WEBHOOK = `legacy-markers.operator-review.${GROUP}`;
/** The paths the operator serves the reviews on (its `--review-bind` listener). */
export const SANDBOX_DELETE_REVIEW_PATH = '/review/sandbox-delete';
export const REFERENCE_DELETE_REVIEW_PATH = '/review/reference-delete';
export const EXCLUSIVE_RECORD_REVIEW_PATH = '/review/exclusive-record';
export const LEGACY_MARKER_REVIEW_PATH = '/review/legacy-marker';
/** The reviews read the API server, each answers within 10 s; the marker review walks the ledger (its budget). */
export const REVIEW_TIMEOUT_SECONDS = 10;
/** The most the API server waits for a webhook. */
export const MARKER_REVIEW_TIMEOUT_SECONDS = 30;

/** How the API server reaches the operator: a URL (the local control plane) or the release's Service. */
export type ReviewEndpoint =
  | { readonly url: string }
  | { readonly service: { readonly namespace: string; readonly name: string; readonly port: number } };

export type OperatorReviewSettings = {
  readonly name?: string;
  /** Who the operator is: the admission parameters' `operatorUsers` (and `extraOperatorUsers`). */
  readonly operatorUsers: readonly string[];
  readonly endpoint: ReviewEndpoint;
  /** The PEM of the CA that signed the operator's serving certificate. */
  readonly caBundlePem: string;
  /** Only the namespaces these labels select (tests keep it to their own); absent: all. */
  readonly namespaceSelector?: { readonly matchLabels: Readonly<Record<string, string>> };
};

/** A CEL list of strings: JSON's array of double-quoted strings is one CEL accepts (and Helm's toJson writes). */
const list = (values: readonly string[]) => JSON.stringify(values);

export function operatorReviewWebhook(settings: OperatorReviewSettings) {
  const { endpoint } = settings;
  const clientConfig = (path: string) => ({
    ...('url' in endpoint ? { url: `${endpoint.url}${path}` } : { service: { ...endpoint.service, path } }),
    caBundle: Buffer.from(settings.caBundlePem, 'utf8').toString('base64'),
  });
  const webhook = (
    name: string,
    path: string,
    resource: string,
    operation = 'DELETE',
    timeoutSeconds = REVIEW_TIMEOUT_SECONDS,
  ) => ({
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    timeoutSeconds,
    clientConfig: clientConfig(path),
    rules: [
      {
        apiGroups: [GROUP],
        apiVersions: ['*'],
        operations: [operation],
        resources: [resource],
        scope: 'Namespaced',
      },
    ],
    ...(settings.namespaceSelector === undefined ? {} : { namespaceSelector: settings.namespaceSelector }),
  });
  const operatorUsers = {
    name: 'operator-users',
    expression: `request.userInfo.username in ${list(settings.operatorUsers)}`,
  };
  // Only the record that turns the verdict Exclusive: every other status write passes without a call.
  const turnsExclusive = {
    name: 'turns-exclusive',
    expression:
      "object.status.?decision.?verdict.orValue('') == 'Exclusive' && " +
      "oldObject.?status.?decision.?verdict.orValue('') != 'Exclusive'",
  };
  // Only the status that turns the marker true on a sandbox that was adopted: recorded so by an earlier status,
  // or carrying the adopted-from annotation at its first. A sandbox born with the marker passes without a call.
  const marksAdopted = {
    name: 'marks-adopted',
    expression:
      'object.status.?reconciliation.?marker.orValue(false) && ' +
      '!oldObject.?status.?reconciliation.?marker.orValue(false) && ' +
      '(oldObject.?status.?reconciliation.hasValue() || ' +
      `object.metadata.?annotations[?'${ANNOTATIONS.adoptedFrom}'].hasValue())`,
  };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: {
      name: settings.name ?? OPERATOR_REVIEW_WEBHOOK,
      labels: { 'app.kubernetes.io/managed-by': 'sandbox-operator' },
    },
    webhooks: [
      {
        ...webhook(OPERATOR_REVIEW_WEBHOOK, SANDBOX_DELETE_REVIEW_PATH, SANDBOX.plural),
        matchConditions: [operatorUsers],
      },
      {
        ...webhook(REFERENCE_REVIEW_WEBHOOK, REFERENCE_DELETE_REVIEW_PATH, SESSION_REFERENCE.plural),
        matchConditions: [operatorUsers],
      },
      {
        ...webhook(
          DECISION_REVIEW_WEBHOOK,
          EXCLUSIVE_RECORD_REVIEW_PATH,
          `${SANDBOX.plural}/status`,
          'UPDATE',
        ),
        matchConditions: [operatorUsers, turnsExclusive],
      },
      {
        ...webhook(
          MARKER_REVIEW_WEBHOOK,
          LEGACY_MARKER_REVIEW_PATH,
          `${SANDBOX.plural}/status`,
          'UPDATE',
          MARKER_REVIEW_TIMEOUT_SECONDS,
        ),
        matchConditions: [operatorUsers, marksAdopted],
      },
    ],
  };
}
