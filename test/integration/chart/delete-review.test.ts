/**
 * The chart's delete review (`deleteReview`, docs/adr/0011): off by default; on, the operator serves it on its
 * own port with a certificate the chart makes for the Service's names, and the ValidatingWebhookConfiguration
 * is exactly what operator/api/operator-review.ts renders — the one source of its rules — and one the real API
 * server accepts (its CEL conditions compile there).
 */
import { X509Certificate } from 'node:crypto';
import type { V1Deployment, V1NetworkPolicy } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { OPERATOR_REVIEW_WEBHOOK, operatorReviewWebhook } from '../../../operator/api/operator-review.ts';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';
import { kubectl } from '../../harness/kube.ts';
import { OPERATOR_USER } from '@sandbox-operator/local-cluster';
import { atLoopback } from '@sandbox-operator/local-cluster/operator-review';
import { find, template, type Rendered } from './helm.ts';

const ON = { deleteReview: { enabled: true } };
const OPERATOR = 'system:serviceaccount:sandbox-system:sandbox-operator';
const LOOPBACK_CA = '-----BEGIN CERTIFICATE-----\nlocal\n-----END CERTIFICATE-----\n';
const container = (rendered: Rendered) =>
  (find(rendered, 'Deployment') as unknown as V1Deployment).spec!.template.spec!.containers[0]!;
const registration = (rendered: Rendered) =>
  find(rendered, 'ValidatingWebhookConfiguration') as unknown as {
    metadata: { name: string };
    webhooks: { clientConfig: { caBundle: string } }[];
  };
const secretData = (rendered: Rendered) =>
  (find(rendered, 'Secret', 'sandbox-operator-review-tls') as unknown as { data: Record<string, string> })
    .data;
const pem = (base64: string) => Buffer.from(base64, 'base64').toString('utf8');

describe('the chart’s delete review', () => {
  it('is off by default: no flag, no Service, no registration', async () => {
    const rendered = await template();
    const config = loadConfig(container(rendered).args!, {});
    expect(config.reviewBind).toBeUndefined();
    expect(rendered.objects.map((o) => o.kind)).not.toContain('ValidatingWebhookConfiguration');
    expect(rendered.objects.map((o) => o.metadata.name)).not.toContain('sandbox-operator-review');
  });

  it('on, is served on its own port over HTTPS with the Secret the chart makes', async () => {
    const rendered = await template(ON);
    const config = loadConfig(container(rendered).args!, {});
    expect(config).toMatchObject({
      reviewBind: ':9443',
      reviewCertDir: '/var/run/secrets/sandbox-operator/review-tls',
    });
    expect(container(rendered).ports).toContainEqual({
      name: 'review',
      containerPort: 9443,
      protocol: 'TCP',
    });
    expect(container(rendered).volumeMounts).toContainEqual({
      name: 'review-tls',
      mountPath: '/var/run/secrets/sandbox-operator/review-tls',
      readOnly: true,
    });
    const service = find(rendered, 'Service', 'sandbox-operator-review') as unknown as {
      spec: { ports: object[] };
    };
    expect(service.spec.ports).toEqual([
      { name: 'review', port: 443, targetPort: 'review', protocol: 'TCP' },
    ]);
  });

  it('on, the serving certificate is the CA’s, for the Service’s name, and the CA is the bundle', async () => {
    const rendered = await template(ON);
    const data = secretData(rendered);
    const ca = new X509Certificate(pem(data['ca.crt']!));
    const serving = new X509Certificate(pem(data['tls.crt']!));
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(serving.checkHost('sandbox-operator-review.sandbox-system.svc')).toBe(
      'sandbox-operator-review.sandbox-system.svc',
    );
    expect(registration(rendered).webhooks[0]!.clientConfig.caBundle).toBe(data['ca.crt']);
  });

  it('on, registers exactly what operatorReviewWebhook renders, for the operator and the extra users', async () => {
    const rendered = await template({
      ...ON,
      admissionPolicy: { extraOperatorUsers: ['ops-robot'] },
    });
    const expected = operatorReviewWebhook({
      operatorUsers: [OPERATOR, 'ops-robot'],
      endpoint: { service: { namespace: 'sandbox-system', name: 'sandbox-operator-review', port: 443 } },
      caBundlePem: pem(secretData(rendered)['ca.crt']!),
    });
    expect(registration(rendered).metadata.name).toBe(`sandbox-operator-operator-review.sandbox.agents.dev`);
    expect(registration(rendered).webhooks).toEqual(expected.webhooks);
    expect(expected.webhooks[0]!.name).toBe(OPERATOR_REVIEW_WEBHOOK);
  });

  it('registered by npm start: the chart’s, for the identity it runs the operator as, at a loopback URL', async () => {
    const rendered = await template(ON);
    const local = atLoopback(rendered.text, 'https://127.0.0.1:9443', LOOPBACK_CA);
    const expected = operatorReviewWebhook({
      operatorUsers: [OPERATOR_USER],
      endpoint: { url: 'https://127.0.0.1:9443' },
      caBundlePem: LOOPBACK_CA,
    });
    expect(local.metadata.name).toBe(registration(rendered).metadata.name);
    expect(local.webhooks).toEqual(expected.webhooks);
    expect(local.webhooks.map((w) => w.clientConfig)).toEqual([
      { url: 'https://127.0.0.1:9443/review/sandbox-delete', caBundle: expect.any(String) },
      { url: 'https://127.0.0.1:9443/review/reference-delete', caBundle: expect.any(String) },
      { url: 'https://127.0.0.1:9443/review/exclusive-record', caBundle: expect.any(String) },
      { url: 'https://127.0.0.1:9443/review/legacy-marker', caBundle: expect.any(String) },
    ]);
  });

  it('on, is a registration the real API server accepts', async () => {
    const rendered = await template(ON);
    const applied = await kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: JSON.stringify(registration(rendered)),
    });
    expect(applied.exitCode, applied.stderr).toBe(0);
  });

  it('on, with the NetworkPolicy, lets the API server reach the review port', async () => {
    const rendered = await template({ ...ON, networkPolicy: { enabled: true } });
    const policy = find(rendered, 'NetworkPolicy') as unknown as V1NetworkPolicy;
    expect(policy.spec!.ingress).toContainEqual({ ports: [{ port: 'review', protocol: 'TCP' }] });
    const off = find(await template({ networkPolicy: { enabled: true } }), 'NetworkPolicy');
    expect((off as unknown as V1NetworkPolicy).spec!.ingress).toEqual([]);
  });
});
