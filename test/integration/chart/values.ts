/** Non-default values used by the chart tests: every optional part switched on. */
export const NON_DEFAULT_VALUES = {
  image: {
    repository: 'registry.example.com/platform/sandbox-operator',
    digest: `sha256:${'a'.repeat(64)}`,
    pullPolicy: 'Always',
  },
  imagePullSecrets: [{ name: 'registry-credentials' }],
  replicaCount: 2,
  operator: {
    workers: 16,
    watchNamespace: 'team-a',
    logLevel: 'debug',
    clusterDns: 'openshift-dns/dns.operator.openshift.io/daemonset-dns=default',
    clusterDnsAddresses: ['169.254.20.10', 'fd00::a'],
    resyncMs: 120000,
    leaderElection: { enabled: true, leaseName: 'sandbox-operator-leader' },
    extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }],
  },
  ledger: {
    url: 'https://ledger.platform.svc:8443',
    tokenSecret: { name: 'ledger-token', key: 'bearer' },
    budgetMs: 15000,
    concurrency: 4,
  },
  shellReaper: {
    namespaces: ['team-a', 'team-b'],
    keptAccounts: ['agent-identity'],
    image: 'registry.example.com/platform/reaper:1.0.0',
  },
  admissionPolicy: { extraOperatorUsers: ['break-glass-admin'] },
  rbac: {
    extraSubjects: [{ kind: 'User', name: 'sandbox-operator-dev', apiGroup: 'rbac.authorization.k8s.io' }],
    aggregateToDefaultRoles: false,
  },
  securityContext: { runAsUser: null, runAsGroup: null },
  podTemplatePolicy: { level: 'restricted', exemptNamespaces: ['platform-ci'] },
  metrics: {
    port: 9090,
    expose: true,
    serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
    prometheusRule: {
      enabled: true,
      labels: { release: 'prometheus' },
      extraAlertLabels: { team: 'platform' },
    },
    grafanaDashboard: { enabled: true, namespace: 'monitoring' },
  },
  podDisruptionBudget: { enabled: true },
  networkPolicy: {
    enabled: true,
    metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
    apiServer: { cidrs: ['10.96.0.1/32'] },
    extraEgress: [{ to: [{ ipBlock: { cidr: '10.20.0.0/16' } }], ports: [{ port: 8443, protocol: 'TCP' }] }],
  },
  priorityClassName: 'system-cluster-critical',
  nodeSelector: { 'kubernetes.io/os': 'linux' },
};
