/**
 * The NetworkPolicy a Managed sandbox gets (issue 26): the blocked ranges are checked here, as the policy's
 * rules, never by sending packets to them.
 */
import { describe, expect, it } from 'vitest';
import {
  BLOCKED_IPV4,
  CLUSTER_DNS,
  BLOCKED_IPV6,
  desiredNetworkPolicy,
  effectiveManagement,
  networkPolicyName,
  ownedBy,
  policyHolds,
  summarizePolicy,
  summaryHolds,
  summaryOwnedBy,
  type DesiredNetworkPolicy,
  type StoredNetworkPolicy,
} from '../../../operator/api/network-policy.ts';
import type { SandboxNetwork } from '../../../operator/api/network.ts';

const sandbox = { namespace: 'team-a', name: 'box', uid: 'uid-1' };
const apiServer = [{ address: '10.0.0.1', port: 6443 }];
const policy = (network?: SandboxNetwork, endpoints = apiServer) =>
  desiredNetworkPolicy(sandbox, network, endpoints);
const internet = (p: DesiredNetworkPolicy) =>
  p.spec.egress.flatMap((r) => r.to ?? []).filter((peer) => peer.ipBlock);

describe('the default egress', () => {
  it('blocks exactly the private, link-local (metadata) and carrier-grade NAT ranges', () => {
    expect(BLOCKED_IPV4).toEqual([
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '169.254.0.0/16',
      '100.64.0.0/10',
    ]);
    expect(BLOCKED_IPV6).toEqual(['fc00::/7', 'fe80::/10']);
  });

  it('opens the internet only without every blocked range, on every port', () => {
    const [rule] = policy().spec.egress;
    expect(rule).toEqual({
      to: [
        { ipBlock: { cidr: '0.0.0.0/0', except: [...BLOCKED_IPV4] } },
        { ipBlock: { cidr: '::/0', except: [...BLOCKED_IPV6] } },
      ],
    });
  });

  it('has no other rule naming a blocked range, nor the metadata address', () => {
    const blocks = internet(policy()).map((peer) => peer.ipBlock?.cidr);
    expect(blocks).toEqual(['0.0.0.0/0', '::/0', '10.0.0.1/32']);
    expect(JSON.stringify(policy().spec)).not.toContain('169.254.169.254');
  });

  it('opens cluster DNS: kube-system’s kube-dns pods on UDP and TCP 53', () => {
    expect(policy().spec.egress[1]).toEqual({
      to: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
          podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
        },
      ],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    });
  });

  it('opens the cluster DNS the operator is given instead (OpenShift’s), with nothing else of the rule changed', () => {
    const openshift = {
      namespace: 'openshift-dns',
      podLabels: { 'dns.operator.openshift.io/daemonset-dns': 'default' },
    };
    expect(desiredNetworkPolicy(sandbox, undefined, apiServer, openshift).spec.egress[1]).toEqual({
      to: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'openshift-dns' } },
          podSelector: { matchLabels: { 'dns.operator.openshift.io/daemonset-dns': 'default' } },
        },
      ],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    });
    // A stored policy of the default DNS no longer holds: a changed setting rolls to every sandbox's policy.
    const stored = policy() as unknown as StoredNetworkPolicy;
    expect(policyHolds(stored, desiredNetworkPolicy(sandbox, undefined, apiServer, openshift))).toBe(false);
  });

  it('opens DNS addresses the operator is given (a node-local cache) alone on UDP and TCP 53, after the pods', () => {
    const nodeLocal = { ...CLUSTER_DNS, addresses: ['fd00::a', '169.254.20.10', 'fd00::a'] };
    const egress = desiredNetworkPolicy(sandbox, undefined, apiServer, nodeLocal).spec.egress;
    expect(egress[1]).toEqual(policy().spec.egress[1]);
    expect(egress[2]).toEqual({
      to: [{ ipBlock: { cidr: '169.254.20.10/32' } }, { ipBlock: { cidr: 'fd00::a/128' } }],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    });
    expect(egress.slice(3)).toEqual(policy().spec.egress.slice(2));
    // None given: no rule at all, as before the setting existed.
    const none = desiredNetworkPolicy(sandbox, undefined, apiServer, { ...CLUSTER_DNS, addresses: [] });
    expect(none).toEqual(policy());
    expect(
      policyHolds(
        policy() as unknown as StoredNetworkPolicy,
        desiredNetworkPolicy(sandbox, undefined, apiServer, nodeLocal),
      ),
    ).toBe(false);
  });

  it('opens each API server endpoint alone on its TCP port, grouped and ordered by port', () => {
    const egress = policy(undefined, [
      { address: '10.0.0.9', port: 6443 },
      { address: '192.168.1.2', port: 443 },
      { address: '10.0.0.1', port: 6443 },
      { address: '10.0.0.1', port: 6443 },
      { address: 'fd00::1', port: 443 },
    ]).spec.egress.slice(2);
    expect(egress).toEqual([
      {
        to: [{ ipBlock: { cidr: '192.168.1.2/32' } }, { ipBlock: { cidr: 'fd00::1/128' } }],
        ports: [{ protocol: 'TCP', port: 443 }],
      },
      {
        to: [{ ipBlock: { cidr: '10.0.0.1/32' } }, { ipBlock: { cidr: '10.0.0.9/32' } }],
        ports: [{ protocol: 'TCP', port: 6443 }],
      },
    ]);
  });

  it('has no API server rule when no endpoint is known', () =>
    expect(policy(undefined, []).spec.egress).toHaveLength(2));
});

describe('the policy', () => {
  it('is the sandbox’s: named, labelled, owned by nothing, over its pods, both directions', () => {
    const p = policy();
    expect(networkPolicyName('box')).toBe('box-sandbox');
    expect(p.apiVersion).toBe('networking.k8s.io/v1');
    expect(p.kind).toBe('NetworkPolicy');
    expect(p.metadata).toEqual({
      name: 'box-sandbox',
      namespace: 'team-a',
      labels: {
        'sandbox.agents.dev/sandbox': 'box',
        'app.kubernetes.io/managed-by': 'sandbox-operator',
        'sandbox.agents.dev/sandbox-uid': 'uid-1',
      },
    });
    expect(p.spec.podSelector).toEqual({ matchLabels: { 'sandbox.agents.dev/sandbox': 'box' } });
    expect(p.spec.policyTypes).toEqual(['Ingress', 'Egress']);
  });

  it('lets nothing in by default: no ingress rule at all (the API server drops an empty list)', () => {
    expect('ingress' in policy().spec).toBe(false);
    expect('ingress' in policy({ management: 'Managed', ingress: [] }).spec).toBe(false);
  });

  it('lets in only the peers the spec lists, on their ports', () => {
    const spec = policy({
      management: 'Managed',
      ingress: [
        {
          from: [{ podSelector: { matchLabels: { app: 'router' } } }],
          ports: [{ protocol: 'TCP', port: 8080 }],
        },
        { from: [{ namespaceSelector: { matchLabels: { team: 'a' } }, podSelector: { matchLabels: {} } }] },
        { from: [{ podSelector: { matchLabels: { app: 'x' } } }], ports: [] },
      ],
    }).spec;
    expect(spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { app: 'router' } } }],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
      { from: [{ namespaceSelector: { matchLabels: { team: 'a' } }, podSelector: {} }] },
      { from: [{ podSelector: { matchLabels: { app: 'x' } } }] },
    ]);
  });

  it('adds the spec’s egress peers after its own rules, selectors as the API server stores them', () => {
    const egress = policy({
      management: 'Managed',
      egress: [
        {
          to: [
            {
              podSelector: {
                matchExpressions: [
                  { key: 'tier', operator: 'In', values: ['db'] },
                  { key: 'x', operator: 'Exists', values: [] },
                  { key: 'y', operator: 'DoesNotExist' },
                ],
              },
              namespaceSelector: { matchExpressions: [] },
            },
          ],
          ports: [{ protocol: 'TCP', port: 5432, endPort: 5433 }],
        },
      ],
    }).spec.egress;
    expect(egress).toHaveLength(4);
    expect(egress[3]).toEqual({
      to: [
        {
          podSelector: {
            matchExpressions: [
              { key: 'tier', operator: 'In', values: ['db'] },
              { key: 'x', operator: 'Exists' },
              { key: 'y', operator: 'DoesNotExist' },
            ],
          },
          namespaceSelector: {},
        },
      ],
      ports: [{ protocol: 'TCP', port: 5432, endPort: 5433 }],
    });
  });

  it('never copies an ipBlock a spec smuggled in (it would re-open a blocked range)', () => {
    const smuggled = {
      management: 'Managed',
      egress: [
        { to: [{ ipBlock: { cidr: '169.254.169.254/32' }, podSelector: { matchLabels: { a: 'b' } } }] },
      ],
      ingress: [
        { from: [{ ipBlock: { cidr: '0.0.0.0/0' }, namespaceSelector: { matchLabels: { a: 'b' } } }] },
      ],
    } as unknown as SandboxNetwork;
    const p = policy(smuggled);
    expect(p.spec.egress[3]).toEqual({ to: [{ podSelector: { matchLabels: { a: 'b' } } }] });
    expect(p.spec.ingress).toEqual([{ from: [{ namespaceSelector: { matchLabels: { a: 'b' } } }] }]);
  });
});

describe('effectiveManagement', () => {
  it('is Unmanaged only when asked and allowed', () => {
    expect(effectiveManagement({ management: 'Unmanaged' }, true)).toBe('Unmanaged');
    expect(effectiveManagement({ management: 'Unmanaged' }, false)).toBe('Managed');
    expect(effectiveManagement({ management: 'Managed' }, true)).toBe('Managed');
    expect(effectiveManagement(undefined, true)).toBe('Managed');
  });
});

/** The desired policy as the API server returns it: keys in another order, an extra label, a version. */
const stored = (
  p: DesiredNetworkPolicy = policy(),
): StoredNetworkPolicy & { metadata: Record<string, unknown> } => {
  const copy = JSON.parse(JSON.stringify(p)) as DesiredNetworkPolicy;
  const reversed = (o: object) => Object.fromEntries(Object.entries(o).reverse());
  return {
    metadata: {
      ...reversed(copy.metadata),
      resourceVersion: '7',
      labels: { ...copy.metadata.labels, extra: 'kept' },
    },
    spec: reversed(copy.spec),
  };
};

/** The owner reference earlier versions gave the policy. */
const SANDBOX_OWNER = {
  apiVersion: 'sandbox.agents.dev/v1alpha1',
  kind: 'Sandbox',
  name: 'box',
  uid: 'uid-1',
  controller: true,
  blockOwnerDeletion: true,
};

describe('policyHolds', () => {
  it('holds for the desired policy as stored (key order and extra labels aside)', () =>
    expect(policyHolds(stored(), policy())).toBe(true));

  it('holds with an empty owner list (the API server drops it)', () =>
    expect(
      policyHolds({ ...stored(), metadata: { ...stored().metadata, ownerReferences: [] } }, policy()),
    ).toBe(true));

  it('holds with a null deletionTimestamp', () =>
    expect(
      policyHolds({ ...stored(), metadata: { ...stored().metadata, deletionTimestamp: null } }, policy()),
    ).toBe(true));

  it('does not hold while being deleted', () =>
    expect(
      policyHolds({ ...stored(), metadata: { ...stored().metadata, deletionTimestamp: 'now' } }, policy()),
    ).toBe(false));

  it.each([
    [
      'a changed label',
      {
        labels: { 'sandbox.agents.dev/sandbox': 'other', 'app.kubernetes.io/managed-by': 'sandbox-operator' },
      },
    ],
    ['a missing label', { labels: { 'sandbox.agents.dev/sandbox': 'box' } }],
    ['no labels', { labels: undefined }],
    [
      'another incarnation’s',
      {
        labels: {
          ...{
            'sandbox.agents.dev/sandbox': 'box',
            'app.kubernetes.io/managed-by': 'sandbox-operator',
            'sandbox.agents.dev/sandbox-uid': 'uid-1',
          },
          'sandbox.agents.dev/sandbox-uid': 'uid-0',
        },
      },
    ],
    // Owned as earlier versions wrote it: a foreground cascade of the Sandbox would take it (issue 26).
    ['the Sandbox as its controller', { ownerReferences: [SANDBOX_OWNER] }],
    ['an owner not controlling', { ownerReferences: [{ ...SANDBOX_OWNER, controller: false }] }],
    [
      'another object as owner',
      { ownerReferences: [{ kind: 'Other', uid: 'x', name: 'y', apiVersion: 'v1' }] },
    ],
  ])('does not hold with %s', (_, metadata) =>
    expect(policyHolds({ ...stored(), metadata: { ...stored().metadata, ...metadata } }, policy())).toBe(
      false,
    ),
  );

  it('does not hold with a changed spec: an opened ingress, a removed except, an extra egress', () => {
    const opened = stored();
    expect(policyHolds({ ...opened, spec: { ...policy().spec, ingress: [{}] } }, policy())).toBe(false);
    const lessExcept = JSON.parse(JSON.stringify(policy().spec)) as DesiredNetworkPolicy['spec'];
    lessExcept.egress[0]?.to?.[0]?.ipBlock?.except?.pop();
    expect(policyHolds({ ...opened, spec: lessExcept }, policy())).toBe(false);
    const reordered = JSON.parse(JSON.stringify(policy().spec)) as DesiredNetworkPolicy['spec'];
    reordered.egress.reverse();
    expect(policyHolds({ ...opened, spec: reordered }, policy())).toBe(false);
    expect(policyHolds({ ...opened, spec: { ...policy().spec, extra: 1 } }, policy())).toBe(false);
    expect(policyHolds({ ...opened, spec: { ...policy().spec, ingress: null } }, policy())).toBe(false);
    expect(policyHolds({ metadata: opened.metadata }, policy())).toBe(false);
  });

  it('tells a list from a map with the same entries, and one port from another', () => {
    const mapped = { ...policy().spec, policyTypes: { 0: 'Ingress', 1: 'Egress' } };
    expect(policyHolds({ ...stored(), spec: mapped }, policy())).toBe(false);
    const moved = JSON.parse(JSON.stringify(policy().spec)) as DesiredNetworkPolicy['spec'];
    const dns = moved.egress[1]?.ports?.[0];
    if (dns) dns.port = 54;
    expect(policyHolds({ ...stored(), spec: moved }, policy())).toBe(false);
  });

  it('holds for nothing without metadata', () =>
    expect(policyHolds({ spec: policy().spec }, policy())).toBe(false));
});

/** The operator's three labels on the policy of `sandbox`. */
const OWN = {
  'sandbox.agents.dev/sandbox': 'box',
  'app.kubernetes.io/managed-by': 'sandbox-operator',
  'sandbox.agents.dev/sandbox-uid': 'uid-1',
};

describe('ownedBy', () => {
  const own = (metadata: Record<string, unknown>) =>
    ownedBy({ metadata: { ...stored().metadata, ...metadata } }, sandbox);

  it('is the operator’s policy of this sandbox incarnation, owned or not (earlier versions owned it)', () => {
    expect(own({})).toBe(true);
    expect(own({ ownerReferences: [SANDBOX_OWNER] })).toBe(true);
  });

  it.each([
    // Each differs from the operator's own in one label only.
    ['not managed by the operator', { labels: { ...OWN, 'app.kubernetes.io/managed-by': undefined } }],
    ['another sandbox’s', { labels: { ...OWN, 'sandbox.agents.dev/sandbox': 'b' } }],
    ['unlabelled', { labels: undefined }],
    [
      'another incarnation’s (a leftover of a Sandbox of the same name)',
      {
        labels: {
          ...{
            'sandbox.agents.dev/sandbox': 'box',
            'app.kubernetes.io/managed-by': 'sandbox-operator',
            'sandbox.agents.dev/sandbox-uid': 'uid-1',
          },
          'sandbox.agents.dev/sandbox-uid': 'uid-0',
        },
      },
    ],
    [
      'without the incarnation (as earlier versions wrote it)',
      { labels: { 'sandbox.agents.dev/sandbox': 'box', 'app.kubernetes.io/managed-by': 'sandbox-operator' } },
    ],
    ['managed by someone else', { labels: { ...OWN, 'app.kubernetes.io/managed-by': 'argocd' } }],
  ])('is not when %s', (_, metadata) => expect(own(metadata)).toBe(false));

  it('is not without metadata', () => expect(ownedBy({}, sandbox)).toBe(false));
});

describe('summarizePolicy (what the cache keeps)', () => {
  it('keeps the operator’s three labels, whether it is owned, and a digest of the spec', () => {
    const summary = summarizePolicy(stored());
    expect(summary.labels).toEqual({
      'sandbox.agents.dev/sandbox': 'box',
      'app.kubernetes.io/managed-by': 'sandbox-operator',
      'sandbox.agents.dev/sandbox-uid': 'uid-1',
    });
    expect(summary.owned).toBe(false);
    expect(summarizePolicy({ metadata: { ownerReferences: [SANDBOX_OWNER] } }).owned).toBe(true);
    expect(summarizePolicy({ metadata: { ownerReferences: [] } }).owned).toBe(false);
    expect(summary.deleting).toBe(false);
    expect(summary.spec).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(JSON.stringify(summary)).not.toContain('0.0.0.0/0');
  });

  it('digests equal specs equally, key order aside, and different ones differently', () => {
    const desired = policy();
    expect(summarizePolicy(stored()).spec).toBe(summarizePolicy(desired).spec);
    expect(summarizePolicy({ ...stored(), spec: { ...desired.spec, ingress: [{}] } }).spec).not.toBe(
      summarizePolicy(desired).spec,
    );
    expect(summarizePolicy({ metadata: {} }).spec).toBe('');
  });

  it('says a policy being deleted, and keeps no label it lacks', () => {
    const summary = summarizePolicy({ metadata: { deletionTimestamp: 'now' } });
    // Strictly: a label it lacks is no key at all (a key holding undefined would be kept for nothing).
    expect(summary).toStrictEqual({ labels: {}, owned: false, deleting: true, spec: '' });
  });

  it('answers as the stored policy does, for holding and owning alike', () => {
    const cases: StoredNetworkPolicy[] = [
      stored(),
      { ...stored(), spec: { ...policy().spec, egress: [{}] } },
      { metadata: { ...stored().metadata, deletionTimestamp: 'now' } },
      { metadata: { ...stored().metadata, labels: {} }, spec: policy().spec },
      { metadata: { ...stored().metadata, ownerReferences: [SANDBOX_OWNER] }, spec: policy().spec },
      {},
    ];
    for (const c of cases) {
      expect(summaryHolds(summarizePolicy(c), policy())).toBe(policyHolds(c, policy()));
      expect(summaryOwnedBy(summarizePolicy(c), sandbox)).toBe(ownedBy(c, sandbox));
    }
    expect(summaryHolds(summarizePolicy(stored()), policy())).toBe(true);
    expect(summaryOwnedBy(summarizePolicy(stored()), sandbox)).toBe(true);
  });
});
