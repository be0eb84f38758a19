/**
 * The chart's part of issue 26's supply chain: the operator's image by digest (the tag kept beside it for
 * people; the runtime pulls by digest), and /metrics exposed only behind the API server's reviews, with
 * the review rights granted only then and a `metrics-reader` role for the scrapers.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { V1ClusterRole, V1ClusterRoleBinding, V1Deployment, V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';
import { find, template, templateResult, type Rendered } from './helm.ts';

const DIGEST = `sha256:${'b'.repeat(64)}`;
const container = (rendered: Rendered) =>
  (find(rendered, 'Deployment') as unknown as V1Deployment).spec!.template.spec!.containers[0]!;
const clusterRoles = (rendered: Rendered) =>
  rendered.objects.filter((o) => o.kind === 'ClusterRole') as unknown as V1ClusterRole[];
const grantsReviews = (rendered: Rendered) =>
  clusterRoles(rendered).some((role) =>
    (role.rules ?? []).some(
      (rule) => rule.resources?.some((r) => r === 'tokenreviews' || r === 'subjectaccessreviews') === true,
    ),
  );
const AUTH = { metrics: { authentication: { enabled: true } } };

describe('the image by digest', () => {
  it('renders repository:tag@digest for the operator and its sidecar when a digest is set', async () => {
    const rendered = await template({ image: { tag: '0.1.0', digest: DIGEST } });
    const expected = `ghcr.io/sandbox-operator/sandbox-operator:0.1.0@${DIGEST}`;
    expect(container(rendered).image).toBe(expected);
    expect(container(rendered).args).toContain(`--sidecar-image=${expected}`);
  });

  it('keeps the tag alone without a digest', async () => {
    const rendered = await template({ image: { tag: '0.1.0' } });
    expect(container(rendered).image).toBe('ghcr.io/sandbox-operator/sandbox-operator:0.1.0');
  });
});

describe('/metrics behind TokenReview and SubjectAccessReview', () => {
  it('is off by default: loopback, and no right to create reviews', async () => {
    const rendered = await template();
    const config = loadConfig(container(rendered).args!, {});
    expect(config.metricsAuth).toBe(false);
    expect(config.metricsBind).toBe('127.0.0.1:8080');
    expect(grantsReviews(rendered)).toBe(false);
    expect(clusterRoles(rendered).map((r) => r.metadata?.name)).not.toContain(
      'sandbox-operator-metrics-reader',
    );
  });

  it('when enabled, serves /metrics on its own port with --metrics-auth and grants the review rights', async () => {
    const rendered = await template(AUTH);
    const config = loadConfig(container(rendered).args!, {});
    expect(config.metricsAuth).toBe(true);
    expect(config.metricsBind).toBe(':8443');
    expect(container(rendered).ports).toContainEqual({
      name: 'metrics',
      containerPort: 8443,
      protocol: 'TCP',
    });
    const auth = find(rendered, 'ClusterRole', 'sandbox-operator-metrics-auth') as unknown as V1ClusterRole;
    expect(auth.rules).toEqual([
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    const binding = find(
      rendered,
      'ClusterRoleBinding',
      'sandbox-operator-metrics-auth',
    ) as unknown as V1ClusterRoleBinding;
    expect(binding.roleRef.name).toBe('sandbox-operator-metrics-auth');
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'sandbox-operator', namespace: 'sandbox-system' },
    ]);
    const reader = find(
      rendered,
      'ClusterRole',
      'sandbox-operator-metrics-reader',
    ) as unknown as V1ClusterRole;
    expect(reader.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  });

  it('serves HTTPS with a self-signed certificate for the Service it makes when no TLS Secret is given', async () => {
    const rendered = await template(AUTH);
    const config = loadConfig(container(rendered).args!, {});
    expect(config.metricsCertDir).toBeDefined();
    const secret = find(rendered, 'Secret', 'sandbox-operator-metrics-tls') as unknown as V1Secret;
    expect(secret.type).toBe('kubernetes.io/tls');
    const pem = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
    const certificate = new X509Certificate(pem('tls.crt'));
    expect(certificate.checkPrivateKey(createPrivateKey(pem('tls.key')))).toBe(true);
    expect(certificate.subjectAltName).toContain('DNS:sandbox-operator-metrics.sandbox-system.svc');
    const pod = (find(rendered, 'Deployment') as unknown as V1Deployment).spec!.template.spec!;
    expect(pod.volumes).toContainEqual(
      expect.objectContaining({
        name: 'metrics-tls',
        secret: expect.objectContaining({ secretName: secret.metadata?.name }),
      }),
    );
  });

  it('scrapes with the scraper’s token, over HTTPS with the TLS Secret given', async () => {
    const rendered = await template({
      metrics: {
        authentication: { enabled: true, tlsSecret: 'metrics-tls' },
        serviceMonitor: { enabled: true },
      },
      networkPolicy: { enabled: true },
    });
    const config = loadConfig(container(rendered).args!, {});
    expect(config.metricsCertDir).toBeDefined();
    expect(container(rendered).volumeMounts).toContainEqual({
      name: 'metrics-tls',
      mountPath: config.metricsCertDir,
      readOnly: true,
    });
    expect(rendered.objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const pod = (find(rendered, 'Deployment') as unknown as V1Deployment).spec!.template.spec!;
    expect(pod.volumes?.find((v) => v.name === 'metrics-tls')?.secret?.secretName).toBe('metrics-tls');
    const endpoint = (find(rendered, 'ServiceMonitor').spec as { endpoints: Record<string, unknown>[] })
      .endpoints[0];
    expect(endpoint).toMatchObject({
      port: 'metrics',
      scheme: 'https',
      bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
    });
    const policy = find(rendered, 'NetworkPolicy').spec as { ingress: { ports: unknown[] }[] };
    expect(policy.ingress.map((rule) => rule.ports)).toEqual([[{ port: 'metrics', protocol: 'TCP' }]]);
    const service = find(rendered, 'Service', 'sandbox-operator-metrics').spec as { ports: unknown[] };
    expect(service.ports).toContainEqual({
      name: 'metrics',
      port: 8443,
      targetPort: 'metrics',
      protocol: 'TCP',
    });
  });

  it('refuses exposing /metrics both without and with authentication', async () => {
    const result = await templateResult({ metrics: { expose: true, authentication: { enabled: true } } });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('metrics.expose and metrics.authentication.enabled');
  });
});
