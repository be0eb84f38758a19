/**
 * The registration of the operator's delete review (controller/delete-review.ts, docs/adr/0011): a
 * ValidatingWebhookConfiguration that sends a Sandbox's DELETE to the operator when the operator's own users
 * make it, and only for the deletes its cleanup makes — a `DeleteWhenUnreferenced` sandbox, not a warm pool's or
 * a sandbox claim's (pool-reach.ts bounds those, and a claim's release deletes its sandbox while others may
 * still reference it: the decision keeps it then). Tenants' deletes never reach it.
 *
 * `failurePolicy: Fail`: an operator that cannot answer its own review cannot delete — only the operator waits,
 * and it is the one asking. The matching is in `matchConditions` (CEL on the request), so the API server calls
 * the webhook for nothing else.
 */
import { GROUP, SANDBOX } from './names.ts';
import { poolOrClaimLabelled } from './pool-reach.ts';

export const OPERATOR_REVIEW_WEBHOOK = `sandbox-deletes.operator-review.${GROUP}`;
/** The path the operator serves the review on (its `--review-bind` listener). */
export const SANDBOX_DELETE_REVIEW_PATH = '/review/sandbox-delete';

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
  const clientConfig = {
    ...('url' in endpoint
      ? { url: `${endpoint.url}${SANDBOX_DELETE_REVIEW_PATH}` }
      : { service: { ...endpoint.service, path: SANDBOX_DELETE_REVIEW_PATH } }),
    caBundle: Buffer.from(settings.caBundlePem, 'utf8').toString('base64'),
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
        name: OPERATOR_REVIEW_WEBHOOK,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        matchPolicy: 'Equivalent',
        timeoutSeconds: 10,
        clientConfig,
        rules: [
          {
            apiGroups: [GROUP],
            apiVersions: ['*'],
            operations: ['DELETE'],
            resources: [SANDBOX.plural],
            scope: 'Namespaced',
          },
        ],
        ...(settings.namespaceSelector === undefined
          ? {}
          : { namespaceSelector: settings.namespaceSelector }),
        matchConditions: [
          {
            name: 'operator-users',
            expression: `request.userInfo.username in ${list(settings.operatorUsers)}`,
          },
          {
            name: 'cleanup-deletes',
            expression:
              "oldObject.spec.?cleanup.?policy.orValue('Retain') == 'DeleteWhenUnreferenced' && " +
              `!${poolOrClaimLabelled('oldObject')}`,
          },
        ],
      },
    ],
  };
}
