/** The operator's settings (wiring/config.ts): every default once, flags over environment, bad values named. */
import { describe, expect, it } from 'vitest';
import { FAILPOINTS } from '../../../operator/controller/deletion/failpoints.ts';
import { ConfigError, loadConfig } from '../../../operator/controller/wiring/config.ts';

describe('operator settings', () => {
  it('carries the timings the manager once hard-coded as defaults', () => {
    const config = loadConfig([], {});
    expect(config).toMatchObject({
      legacyRetryMs: 600_000,
      legacyRetryWhileDeletingMs: 30_000,
      cacheSyncTimeoutMs: 120_000,
      shutdownGraceMs: 30_000,
      failpoints: [],
    });
  });

  it('takes a flag over its environment variable', () => {
    const config = loadConfig(['--shutdown-grace-ms', '5000'], {
      SANDBOX_OPERATOR_SHUTDOWN_GRACE_MS: '9000',
    });
    expect(config.shutdownGraceMs).toBe(5000);
  });

  it('arms the failpoints SANDBOX_OPERATOR_FAILPOINTS names', () => {
    const names = FAILPOINTS.slice(0, 2);
    expect(loadConfig([], { SANDBOX_OPERATOR_FAILPOINTS: names.join(',') }).failpoints).toEqual(names);
  });

  it('refuses a failpoint it does not know, naming the flag, the variable and the known names', () => {
    const load = () => loadConfig([], { SANDBOX_OPERATOR_FAILPOINTS: 'prune,no-such-step' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(
      /--failpoints \(or SANDBOX_OPERATOR_FAILPOINTS\): unknown failpoint\(s\) no-such-step; known: /,
    );
  });

  it('reads the cluster DNS as <namespace>/<pod labels>, kube-system’s kube-dns by default', () => {
    expect(loadConfig([], {}).clusterDns).toEqual({
      namespace: 'kube-system',
      podLabels: { 'k8s-app': 'kube-dns' },
    });
    expect(
      loadConfig(
        ['--cluster-dns', 'openshift-dns/dns.operator.openshift.io/daemonset-dns=default,tier=dns'],
        {},
      ).clusterDns,
    ).toEqual({
      namespace: 'openshift-dns',
      podLabels: { 'dns.operator.openshift.io/daemonset-dns': 'default', tier: 'dns' },
    });
    for (const bad of [
      'kube-system',
      'kube-system/',
      'Kube/x=y',
      'kube-system/k8s-app',
      'ns/a=b,',
      'ns/a=b=c',
    ])
      expect(() => loadConfig(['--cluster-dns', bad], {}), bad).toThrow(
        /--cluster-dns \(or SANDBOX_OPERATOR_CLUSTER_DNS\): must be <namespace>\/<key>=<value>/,
      );
  });

  it('reads the DNS addresses besides the pods (a node-local cache), none by default', () => {
    expect(loadConfig([], {}).clusterDnsAddress).toEqual([]);
    expect(loadConfig(['--cluster-dns-address', '169.254.20.10'], {}).clusterDnsAddress).toEqual([
      '169.254.20.10',
    ]);
    expect(
      loadConfig([], { SANDBOX_OPERATOR_CLUSTER_DNS_ADDRESS: '169.254.20.10,fd00::a' }).clusterDnsAddress,
    ).toEqual(['169.254.20.10', 'fd00::a']);
    const many = Array.from({ length: 9 }, (_, i) => `10.0.0.${i + 1}`).join(',');
    for (const bad of ['169.254.20.10/32', 'node-local', '169.254.20.10,', '300.1.1.1', many])
      expect(() => loadConfig(['--cluster-dns-address', bad], {}), bad).toThrow(
        /--cluster-dns-address \(or SANDBOX_OPERATOR_CLUSTER_DNS_ADDRESS\): must be up to 8 IP addresses/,
      );
  });

  it('keeps /metrics unauthenticated on loopback by default, and guarded only on a port of its own', () => {
    const defaults = loadConfig([], {});
    expect(defaults.metricsAuth).toBe(false);
    expect(defaults.metricsBind).toBe('127.0.0.1:8080');
    expect(loadConfig(['--metrics-auth', 'true', '--metrics-bind', ':8443'], {}).metricsAuth).toBe(true);
    // The kubelet's probes carry no token: the probe port cannot be the guarded one.
    const shared = () => loadConfig(['--metrics-auth', 'true', '--metrics-bind', ':8081'], {});
    expect(shared).toThrow(/--metrics-bind .*must differ from --probe-bind \(:8081\)/);
  });

  it('serves the delete review only when asked, and only with its certificate', () => {
    expect(loadConfig([], {})).toMatchObject({ reviewBind: undefined, reviewCertDir: undefined });
    const both = loadConfig(['--review-bind', ':9443', '--review-cert-dir', '/certs'], {});
    expect(both).toMatchObject({ reviewBind: ':9443', reviewCertDir: '/certs' });
    expect(() => loadConfig(['--review-bind', ':9443'], {})).toThrow(
      /--review-cert-dir \(or SANDBOX_OPERATOR_REVIEW_CERT_DIR\): required with --review-bind/,
    );
    expect(() => loadConfig([], { SANDBOX_OPERATOR_REVIEW_CERT_DIR: '/certs' })).toThrow(
      /--review-bind \(or SANDBOX_OPERATOR_REVIEW_BIND\): required with --review-cert-dir/,
    );
  });
});
