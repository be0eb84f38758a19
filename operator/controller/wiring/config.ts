/**
 * Operator settings from flags and environment (flags win), validated with zod: a bad value fails at start with
 * the flag's name and its limit. Every default is documented here, once.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { SHELL_REAPER_ACCOUNT } from '../../api/names.ts';
import { CLUSTER_DNS, type ClusterDns } from '../../api/network-policy.ts';
import { FAILPOINTS, type Failpoint } from '../deletion/failpoints.ts';

/** A label `[prefix/]name=value`, as Kubernetes spells label keys and values. */
const LABEL =
  '([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?=([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?';
const CLUSTER_DNS_PATTERN = new RegExp(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?/${LABEL}(,${LABEL})*$`);
const labelList = (labels: Readonly<Record<string, string>>) =>
  Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');

/** `<namespace>/<key>=<value>,...`: the namespace ends at the first `/` (a label key may hold one too). */
function clusterDnsOf(flag: string): ClusterDns {
  const slash = flag.indexOf('/');
  const labels = flag.slice(slash + 1).split(',');
  return {
    namespace: flag.slice(0, slash),
    podLabels: Object.fromEntries(
      labels.map((label): [string, string] => {
        const [key = '', value = ''] = label.split('=');
        return [key, value];
      }),
    ),
  };
}

const duration = (flag: string, fallback: number) =>
  z.coerce.number().int().min(0).max(86_400_000).default(fallback).describe(flag);

const configSchema = z.object({
  workers: z.coerce.number().int().min(1).max(64).default(8).describe('--workers: concurrent reconciles'),
  namespace: z.string().optional().describe('--namespace: watch one namespace (default: all)'),
  leaderElect: z.stringbool().default(true).describe('--leader-elect'),
  leaseNamespace: z.string().default('sandbox-system').describe('--lease-namespace'),
  leaseName: z.string().default('sandbox-operator').describe('--lease-name'),
  identity: z
    .string()
    .default(`${hostname()}-${process.pid}`)
    .describe('--identity: this replica in the lease'),
  probeBind: z
    .string()
    .default(':8081')
    .describe('--probe-bind: /healthz and /readyz (where the kubelet probes)'),
  metricsBind: z
    .string()
    .default('127.0.0.1:8080')
    .describe(
      '--metrics-bind: /metrics, loopback by default (docs/security.md); equal to --probe-bind: one listener',
    ),
  metricsAuth: z
    .stringbool()
    .default(false)
    .describe(
      '--metrics-auth: /metrics only to bearer tokens the API server authenticates and authorizes for get /metrics',
    ),
  metricsCertDir: z
    .string()
    .optional()
    .describe('--metrics-cert-dir: tls.crt and tls.key here: /metrics over HTTPS (its own --metrics-bind)'),
  reviewBind: z
    .string()
    .optional()
    .describe(
      "--review-bind: serve the operator's delete review here, over HTTPS (docs/adr/0011); default: not served",
    ),
  reviewCertDir: z
    .string()
    .optional()
    .describe(
      '--review-cert-dir: tls.crt and tls.key for --review-bind (the API server calls it over HTTPS)',
    ),
  admissionParams: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/, 'expected <namespace>/<name>')
    .default('sandbox-system/sandbox-operator-admission')
    .describe('--admission-params: the pod-protection policy parameters ConfigMap, checked at start'),
  ledgerUrl: z.url().optional().describe('--ledger-url: the session ledger (legacy reconciliation)'),
  locatorUrl: z.url().optional().describe('--locator-url: the runtime locator (default: the ledger URL)'),
  ledgerTokenFile: z
    .string()
    .optional()
    .describe('--ledger-token-file: bearer token for the ledger, and for the locator when it has no own URL'),
  locatorTokenFile: z
    .string()
    .optional()
    .describe('--locator-token-file: bearer token for a locator at its own --locator-url'),
  ledgerAllowInsecureHttp: z
    .stringbool()
    .default(false)
    .describe('--ledger-allow-insecure-http: accept http:// ledger and locator URLs (tests only)'),
  reconcileBudgetMs: duration('--reconcile-budget-ms', 20_000),
  reconcileCallMs: duration('--reconcile-call-ms', 5_000),
  reconcileConcurrency: z.coerce.number().int().min(1).max(64).default(8).describe('--reconcile-concurrency'),
  resyncMs: duration('--resync-ms', 300_000),
  blockedRecheckMs: duration('--blocked-recheck-ms', 60_000),
  legacyRetryMs: duration('--legacy-retry-ms: least spacing of legacy walks of a live sandbox', 600_000),
  legacyRetryWhileDeletingMs: duration(
    '--legacy-retry-while-deleting-ms: least spacing of legacy walks of a sandbox being deleted',
    30_000,
  ),
  cacheSyncTimeoutMs: duration(
    '--cache-sync-timeout-ms: how long the first LIST of each cache may take',
    120_000,
  ),
  shutdownGraceMs: duration(
    '--shutdown-grace-ms: how long in-flight reconciles may finish on SIGTERM',
    30_000,
  ),
  failpoints: z
    .string()
    .default('')
    .transform((names, context): Failpoint[] => {
      const listed = names.split(',').filter((name) => name !== '');
      const unknown = listed.filter((name) => !(FAILPOINTS as readonly string[]).includes(name));
      if (unknown.length > 0)
        context.addIssue({
          code: 'custom',
          message: `unknown failpoint(s) ${unknown.join(', ')}; known: ${FAILPOINTS.join(', ')}`,
        });
      return listed as Failpoint[];
    })
    .describe('--failpoints: crash tests only: SIGKILL right after these deletion steps write'),
  sidecarImage: z
    .string()
    .default('ghcr.io/sandbox-operator/sandbox-operator:0.1.0')
    .describe('--sidecar-image'),
  sidecarServiceAccount: z.string().default(SHELL_REAPER_ACCOUNT).describe('--sidecar-service-account'),
  managedNamespaceLabel: z
    .string()
    .regex(/^$|^[^=,!\s]+=[^=,!\s]*$/, 'must be key=value (a namespace label), or empty for every namespace')
    .default('')
    .describe('--managed-namespace-label: act only in namespaces with this label (key=value); empty: all'),
  clusterDns: z
    .string()
    .regex(CLUSTER_DNS_PATTERN, "must be <namespace>/<key>=<value>[,<key>=<value>...] (the DNS pods' labels)")
    .default(`${CLUSTER_DNS.namespace}/${labelList(CLUSTER_DNS.podLabels)}`)
    .transform(clusterDnsOf)
    .describe(
      '--cluster-dns: the DNS the sandboxes may reach on port 53, <namespace>/<pod labels> (default ' +
        'kube-system/k8s-app=kube-dns; OpenShift: openshift-dns/dns.operator.openshift.io/daemonset-dns=default)',
    ),
  clusterDnsAddress: z
    .string()
    .default('')
    .transform((flag) => (flag === '' ? [] : flag.split(',')))
    .refine((addresses) => addresses.length <= 8 && addresses.every((address) => isIP(address) !== 0), {
      message: 'must be up to 8 IP addresses, comma-separated (a node-local DNS cache: 169.254.20.10)',
    })
    .describe(
      '--cluster-dns-address: addresses the sandboxes may also reach on port 53, besides the --cluster-dns ' +
        'pods (NodeLocal DNSCache: 169.254.20.10, otherwise blocked as link-local); default none',
    ),
  logLevel: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace'])
    .default('info')
    .describe('--log-level'),
});

export type OperatorConfig = z.infer<typeof configSchema> & {
  readonly ledgerToken: string | undefined;
  readonly locatorToken: string | undefined;
};

const FLAGS = Object.keys(configSchema.shape);
const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const envName = (name: string) => `SANDBOX_OPERATOR_${kebab(name).replaceAll('-', '_').toUpperCase()}`;

export class ConfigError extends Error {
  readonly kind = 'InvalidConfig';
}

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): OperatorConfig {
  const { values } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(FLAGS.map((name) => [kebab(name), { type: 'string' as const }])),
    strict: true,
    allowPositionals: false,
  });
  const raw = Object.fromEntries(FLAGS.map((name) => [name, values[kebab(name)] ?? env[envName(name)]]));
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? '');
    throw new ConfigError(`--${kebab(field)} (or ${envName(field)}): ${issue?.message ?? 'invalid'}`, {
      cause: parsed.error,
    });
  }
  const config = parsed.data;
  requireHttps(config);
  requireOwnMetricsPort(config);
  requireReviewCertificate(config);
  const ledgerToken = config.ledgerTokenFile
    ? readFileSync(config.ledgerTokenFile, 'utf8').trim()
    : env['SANDBOX_OPERATOR_LEDGER_TOKEN'];
  const locatorToken = config.locatorTokenFile
    ? readFileSync(config.locatorTokenFile, 'utf8').trim()
    : env['SANDBOX_OPERATOR_LOCATOR_TOKEN'];
  return { ...config, ledgerToken, locatorToken };
}

/** The kubelet probes over plain HTTP without a token: a guarded or HTTPS /metrics needs its own listener. */
function requireOwnMetricsPort(config: z.infer<typeof configSchema>): void {
  if ((config.metricsAuth || config.metricsCertDir !== undefined) && config.metricsBind === config.probeBind)
    throw new ConfigError(
      `--metrics-bind (or ${envName('metricsBind')}): must differ from --probe-bind (${config.probeBind}) ` +
        'with --metrics-auth or --metrics-cert-dir',
    );
}

/** The API server calls a webhook over HTTPS only: a review listener needs its certificate, and the other way round. */
function requireReviewCertificate(config: z.infer<typeof configSchema>): void {
  if ((config.reviewBind === undefined) === (config.reviewCertDir === undefined)) return;
  const [given, missing] =
    config.reviewBind === undefined ? ['reviewCertDir', 'reviewBind'] : ['reviewBind', 'reviewCertDir'];
  throw new ConfigError(
    `--${kebab(missing)} (or ${envName(missing)}): required with --${kebab(given)}: the delete review is ` +
      'served over HTTPS, on its own listener',
  );
}

/**
 * The ledger's answers can clear sandboxes for destruction and carry a bearer token: plaintext would let a
 * man in the middle read the token and answer "no owners" (issue 15). http:// only with the explicit flag.
 */
function requireHttps(config: z.infer<typeof configSchema>): void {
  if (config.ledgerAllowInsecureHttp) return;
  for (const field of ['ledgerUrl', 'locatorUrl'] as const) {
    const url = config[field];
    if (url !== undefined && new URL(url).protocol !== 'https:')
      throw new ConfigError(
        `--${kebab(field)} (or ${envName(field)}): must be an https:// URL, got ${new URL(url).protocol}// ` +
          '(set --ledger-allow-insecure-http true only for a test ledger on loopback)',
      );
  }
}
