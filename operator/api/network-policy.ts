/**
 * The NetworkPolicy the operator keeps for a Managed sandbox (network.ts), as pure functions of the Sandbox,
 * its namespace's opt-in and the API server's endpoints. Pure and mutation-tested: the blocked ranges are
 * checked here, as rules, never by sending packets to them (issue 26).
 *
 * Egress: the public internet (0.0.0.0/0 and ::/0 without the ranges below), cluster DNS (kube-system's
 * kube-dns pods, or the operator's --cluster-dns; port 53), the API server's endpoints (the shell reaper
 * reports to it; policies apply after the Service's DNAT, so its endpoints, not its ClusterIP), and the peers
 * the spec lists. Ingress: only the spec's peers.
 *
 * The policy has no owner, as the eviction guard has none: a foreground cascade of the Sandbox (or any owner's)
 * would delete it while the exclusivity decision still holds the pods, which would then run unisolated. The
 * deletion keeps it while pods stand and removes it once they are gone (controller/deletion/steps.ts).
 */
import { createHash } from 'node:crypto';
import { LABELS, MANAGED_BY } from './names.ts';
import type { NetworkManagement, SandboxNetwork } from './network.ts';

/**
 * Never reachable by default: RFC 1918 (the cluster's pods, services and nodes), link-local (169.254.169.254,
 * the cloud metadata server) and carrier-grade NAT (100.64.0.0/10: some clouds' pod and node ranges, and
 * Alibaba's metadata address 100.100.100.200).
 */
export const BLOCKED_IPV4 = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '169.254.0.0/16',
  '100.64.0.0/10',
] as const;
/** Unique local (fc00::/7, AWS's fd00:ec2::254 metadata address among them) and link-local. */
export const BLOCKED_IPV6 = ['fc00::/7', 'fe80::/10'] as const;

/**
 * Where the sandboxes resolve names, on port 53 (UDP and TCP): pods with these labels in that namespace, and
 * any addresses given (a node-local DNS cache listens on a link-local address no pod selector reaches).
 */
export type ClusterDns = {
  readonly namespace: string;
  readonly podLabels: Readonly<Record<string, string>>;
  readonly addresses?: readonly string[];
};

/**
 * Cluster DNS, as every kubeadm, kind and managed cluster labels it. Another (OpenShift's `openshift-dns`) is
 * the operator's `--cluster-dns` (controller/wiring/config.ts).
 */
export const CLUSTER_DNS: ClusterDns = {
  namespace: 'kube-system',
  podLabels: { 'k8s-app': 'kube-dns' },
};
const DNS_PORT = 53;

/** One address and port of the `kubernetes` Service's endpoints (its EndpointSlice in `default`). */
export type ApiServerEndpoint = { readonly address: string; readonly port: number };

export type SandboxIdentity = { readonly namespace: string; readonly name: string; readonly uid: string };

type Selector = {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?: { key: string; operator: string; values?: string[] | undefined }[] | undefined;
};
type Peer = {
  podSelector?: Selector | undefined;
  namespaceSelector?: Selector | undefined;
  ipBlock?: { cidr: string; except?: string[] };
};
type Port = { protocol: string; port?: number | undefined; endPort?: number | undefined };
type Rule = { peers?: Peer[]; ports?: Port[] };

export type DesiredNetworkPolicy = {
  apiVersion: 'networking.k8s.io/v1';
  kind: 'NetworkPolicy';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
  };
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: ['Ingress', 'Egress'];
    ingress?: { from?: Peer[]; ports?: Port[] }[];
    egress: { to?: Peer[]; ports?: Port[] }[];
  };
};

/** One per sandbox, named after it (as its eviction guard, a PodDisruptionBudget of another kind). */
export const networkPolicyName = (sandbox: string) => `${sandbox}-sandbox`;

/** What counts: Unmanaged only where an administrator allowed it; everything else is Managed. */
export function effectiveManagement(
  network: SandboxNetwork | undefined,
  unmanagedAllowed: boolean,
): NetworkManagement {
  return network?.management === 'Unmanaged' && unmanagedAllowed ? 'Unmanaged' : 'Managed';
}

const hostCidr = (address: string) => (address.includes(':') ? `${address}/128` : `${address}/32`);

function apiServerRules(endpoints: readonly ApiServerEndpoint[]): Rule[] {
  // One rule per port: a rule opens every listed port to every listed peer.
  const byPort = new Map<number, Set<string>>();
  for (const { address, port } of endpoints)
    byPort.set(port, (byPort.get(port) ?? new Set()).add(hostCidr(address)));
  return [...byPort.entries()]
    .sort(([a], [b]) => a - b)
    .map(([port, cidrs]) => ({
      peers: [...cidrs].sort().map((cidr) => ({ ipBlock: { cidr } })),
      ports: [{ protocol: 'TCP', port }],
    }));
}

const DNS_PORTS: Port[] = [
  { protocol: 'UDP', port: DNS_PORT },
  { protocol: 'TCP', port: DNS_PORT },
];

/** The DNS pods; then, only when addresses are given, those addresses alone (each a host block). */
const dnsRules = (dns: ClusterDns): Rule[] => [
  {
    peers: [
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': dns.namespace } },
        podSelector: { matchLabels: { ...dns.podLabels } },
      },
    ],
    ports: DNS_PORTS.map((port) => ({ ...port })),
  },
  ...((dns.addresses ?? []).length === 0
    ? []
    : [
        {
          peers: [...new Set(dns.addresses)]
            .sort()
            .map((address) => ({ ipBlock: { cidr: hostCidr(address) } })),
          ports: DNS_PORTS.map((port) => ({ ...port })),
        },
      ]),
];

const INTERNET_RULE: Rule = {
  peers: [
    { ipBlock: { cidr: '0.0.0.0/0', except: [...BLOCKED_IPV4] } },
    { ipBlock: { cidr: '::/0', except: [...BLOCKED_IPV6] } },
  ],
};

/** The spec's rules, copied field by field: only what network.ts lets a tenant write reaches the policy. */
function tenantRules(rules: readonly { peers: readonly Peer[]; ports?: readonly Port[] | undefined }[]) {
  return rules.map(({ peers, ports }) => ({
    peers: peers.map((peer) => ({
      ...(peer.podSelector ? { podSelector: selectorAsStored(peer.podSelector) } : {}),
      ...(peer.namespaceSelector ? { namespaceSelector: selectorAsStored(peer.namespaceSelector) } : {}),
    })),
    ...(ports && ports.length > 0 ? { ports: ports.map((port) => ({ ...port })) } : {}),
  }));
}

/** A selector as the API server stores it: empty lists and maps dropped (omitempty), so it compares equal. */
function selectorAsStored(selector: Selector): Selector {
  const labels = selector.matchLabels ?? {};
  const expressions = selector.matchExpressions ?? [];
  return {
    ...(Object.keys(labels).length > 0 ? { matchLabels: { ...labels } } : {}),
    ...(expressions.length > 0
      ? {
          matchExpressions: expressions.map(({ key, operator, values }) => ({
            key,
            operator,
            ...(values !== undefined && values.length > 0 ? { values: [...values] } : {}),
          })),
        }
      : {}),
  };
}

export function desiredNetworkPolicy(
  sandbox: SandboxIdentity,
  network: SandboxNetwork | undefined,
  apiServer: readonly ApiServerEndpoint[],
  dns: ClusterDns = CLUSTER_DNS,
): DesiredNetworkPolicy {
  const ingress = tenantRules((network?.ingress ?? []).map((r) => ({ peers: r.from, ports: r.ports })));
  const egress = [
    INTERNET_RULE,
    ...dnsRules(dns),
    ...apiServerRules(apiServer),
    ...tenantRules((network?.egress ?? []).map((r) => ({ peers: r.to, ports: r.ports }))),
  ];
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: networkPolicyName(sandbox.name),
      namespace: sandbox.namespace,
      labels: {
        [LABELS.sandbox]: sandbox.name,
        [LABELS.managedBy]: MANAGED_BY,
        [LABELS.sandboxUid]: sandbox.uid,
      },
    },
    spec: {
      podSelector: { matchLabels: { [LABELS.sandbox]: sandbox.name } },
      policyTypes: ['Ingress', 'Egress'],
      // No rule, no key: the API server drops an empty list, and the stored policy must compare equal.
      ...(ingress.length > 0
        ? { ingress: ingress.map(({ peers, ports }) => ({ from: peers, ...(ports ? { ports } : {}) })) }
        : {}),
      egress: egress.map(({ peers, ports }) => ({
        ...(peers ? { to: peers } : {}),
        ...(ports ? { ports } : {}),
      })),
    },
  };
}

/** What of a stored policy the operator owns: its labels, owners and spec. */
export type StoredNetworkPolicy = {
  readonly metadata?: {
    readonly labels?: Readonly<Record<string, string>> | undefined;
    readonly ownerReferences?: readonly unknown[] | undefined;
    readonly deletionTimestamp?: unknown;
  };
  readonly spec?: unknown;
};

/**
 * What the operator's comparisons read of a stored policy, and no more (the cache keeps this, docs/adr/0009):
 * its three labels, whether anything owns it, whether it is being deleted, and a digest of its spec.
 */
export type PolicySummary = {
  readonly labels: Readonly<Record<string, string>>;
  /** Some owner reference: a cascade from that owner (a Sandbox, under earlier versions) would delete it. */
  readonly owned: boolean;
  readonly deleting: boolean;
  /** SHA-256 of the spec's JSON, keys sorted: equal digests, equal specs (key order aside). */
  readonly spec: string;
};

/** The operator's labels: the desired policy carries exactly these (desiredNetworkPolicy). */
const OWN_LABELS = [LABELS.sandbox, LABELS.managedBy, LABELS.sandboxUid] as const;

export function summarizePolicy(stored: StoredNetworkPolicy): PolicySummary {
  const { labels = {}, ownerReferences = [], deletionTimestamp } = stored.metadata ?? {};
  return {
    labels: Object.fromEntries(
      OWN_LABELS.flatMap((key) => {
        const value = labels[key];
        return value === undefined ? [] : [[key, value] as const];
      }),
    ),
    owned: ownerReferences.length > 0,
    deleting: (deletionTimestamp ?? undefined) !== undefined,
    spec: specDigest(stored.spec),
  };
}

/**
 * Whether the stored policy is the desired one: same spec (as the API server returns it, defaults included:
 * the desired spec spells every default out), the operator's labels and no owner (an owned one, as earlier
 * versions wrote it or as someone made it, is put back ownerless so that no cascade can take it).
 */
export function policyHolds(stored: StoredNetworkPolicy, desired: DesiredNetworkPolicy): boolean {
  return summaryHolds(summarizePolicy(stored), desired);
}

/** policyHolds on what the cache keeps of the stored policy. */
export function summaryHolds(stored: PolicySummary, desired: DesiredNetworkPolicy): boolean {
  return (
    !stored.deleting &&
    Object.entries(desired.metadata.labels).every(([key, value]) => stored.labels[key] === value) &&
    !stored.owned &&
    stored.spec === specDigest(desired.spec)
  );
}

/**
 * Whether a stored policy is the operator's for this sandbox incarnation (so it may delete it): by its labels,
 * since it has no owner. A policy a tenant labelled so in its own namespace is the tenant's to lose.
 */
export function ownedBy(stored: StoredNetworkPolicy, sandbox: SandboxIdentity): boolean {
  return summaryOwnedBy(summarizePolicy(stored), sandbox);
}

/** ownedBy on what the cache keeps of the stored policy. */
export function summaryOwnedBy(stored: PolicySummary, sandbox: SandboxIdentity): boolean {
  return (
    stored.labels[LABELS.managedBy] === MANAGED_BY &&
    stored.labels[LABELS.sandbox] === sandbox.name &&
    stored.labels[LABELS.sandboxUid] === sandbox.uid
  );
}

/** No spec (an object that is no policy) digests to '', which no spec's digest equals. */
function specDigest(spec: unknown): string {
  if (spec === undefined) return '';
  return createHash('sha256').update(JSON.stringify(spec, sortedKeys)).digest('base64');
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const object = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .map((key) => [key, object[key]]),
  );
}
