/**
 * Network isolation by default (issue 26): every Managed sandbox gets its NetworkPolicy, which comes back
 * when deleted or changed; Unmanaged counts only where an administrator labelled the namespace; and the
 * operator's identity may write no other NetworkPolicy (operator bounds). Enforcement itself is not tested
 * here (docs/security.md): these are the policy's objects, against a real API server.
 */
import { NetworkingV1Api, type V1NetworkPolicy, type V1NetworkPolicyPort } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, LABELS, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import { BLOCKED_IPV4 } from '../../../operator/api/network-policy.ts';
import { NETWORK_UNMANAGED_LABEL } from '../../../operator/api/network.ts';
import { kubeConfig, kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { startHoldingProxy, type HoldingProxy } from '../../harness/holding-proxy.ts';
import { sandboxControllerActivity } from '../../harness/prometheus-text.ts';
import { createSandbox, getSandbox, sandboxManifest, untilSandbox } from './fixtures.ts';
import {
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  restrictedKubeConfig,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('netpol');
let operator: RunningOperator;
/** The operator reaches the API server through a proxy that notes each request (method and URL). */
let proxy: HoldingProxy;
const requests: string[] = [];
const networking = () => kubeConfig().makeApiClient(NetworkingV1Api);

const policyOf = (sandbox: string): Promise<V1NetworkPolicy | undefined> =>
  networking()
    .readNamespacedNetworkPolicy({ namespace, name: `${sandbox}-sandbox` })
    .catch((error: unknown) => {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    });

const untilPolicy = (sandbox: string, what: string, ok: (p: V1NetworkPolicy) => boolean) =>
  eventually(what, async () => {
    const policy = await policyOf(sandbox);
    return policy !== undefined && ok(policy) ? policy : pending(policy?.spec ?? 'no policy');
  });

async function createWithNetwork(name: string, network: object) {
  const manifest = sandboxManifest(namespace, name);
  await customObjects().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX.plural,
    body: { ...manifest, spec: { ...manifest.spec, network } },
  });
}

/** A merge patch of the sandbox `isolated`'s policy, as a user's `kubectl patch`. */
const patchPolicy = (patch: object) =>
  kubectlOk([
    'patch',
    'networkpolicy',
    'isolated-sandbox',
    '-n',
    namespace,
    '--type',
    'merge',
    '-p',
    JSON.stringify(patch),
  ]);

/** A metadata change: its watch event brings the sandbox's turn. */
const touch = (sandbox: string, value: string) =>
  kubectlOk(['annotate', '--overwrite', 'sandbox', sandbox, '-n', namespace, `test/touched=${value}`]);

let wroteSlice = false;

/**
 * The API server's slice, as a real cluster keeps it. The local control plane keeps none (its pods reach the
 * API server over the node's loopback): one is written there, on a documentation address (TEST-NET-1) nothing
 * routes to, and removed after.
 */
async function apiServerSlice(): Promise<{ address: string; port: number }> {
  const found = await kubectl(['get', 'endpointslice', 'kubernetes', '-n', 'default', '-o', 'json']);
  if (found.exitCode === 0) {
    const slice = JSON.parse(found.stdout) as {
      endpoints: { addresses: string[] }[];
      ports: { port: number }[];
    };
    return { address: slice.endpoints[0]?.addresses[0] ?? '', port: slice.ports[0]?.port ?? 0 };
  }
  await kubectlOk(['create', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'kubernetes.io/service-name': 'kubernetes' },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['192.0.2.10'], conditions: { ready: true } }],
      ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
    }),
  });
  wroteSlice = true;
  return { address: '192.0.2.10', port: 6443 };
}

beforeAll(async () => {
  await grantOperatorRbac();
  proxy = await startHoldingProxy(restrictedKubeConfig(), (method, url) => {
    requests.push(`${method} ${url}`);
    return undefined;
  });
  operator = startOperator(namespace, [], undefined, proxy.kubeConfig);
  await createSandbox(namespace, 'isolated');
});
afterAll(async () => {
  await operator.stop();
  await proxy.close();
  if (wroteSlice) await kubectlOk(['delete', 'endpointslice', 'kubernetes', '-n', 'default']);
});

describe('a Managed sandbox', () => {
  it('gets its NetworkPolicy: its pods, both directions, owned by nothing a cascade could delete', async () => {
    const policy = await untilPolicy('isolated', 'the policy', () => true);
    expect(policy.metadata?.labels?.[LABELS.sandbox]).toBe('isolated');
    expect(policy.metadata?.ownerReferences).toBeUndefined();
    expect(policy.spec?.podSelector).toEqual({ matchLabels: { [LABELS.sandbox]: 'isolated' } });
    expect(policy.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec?.ingress).toBeUndefined();
    const internet = policy.spec?.egress?.[0]?.to?.find((peer) => peer.ipBlock?.cidr === '0.0.0.0/0');
    expect(internet?.ipBlock?.except).toEqual([...BLOCKED_IPV4]);
  });

  it('lets its pods reach the API server at the addresses of the EndpointSlice default/kubernetes', async () => {
    const { address, port } = await apiServerSlice();
    await touch('isolated', 'endpoints');
    const policy = await untilPolicy('isolated', 'the API server opened', (p) =>
      (p.spec?.egress ?? []).some((r) => r.to?.some((peer) => peer.ipBlock?.cidr === `${address}/32`)),
    );
    expect(policy.spec?.egress?.[2]).toEqual({
      to: [{ ipBlock: { cidr: `${address}/32` } }],
      ports: [{ protocol: 'TCP', port }],
    });
  });

  it('gets it back when it is deleted', async () => {
    const before = await untilPolicy('isolated', 'the policy', () => true);
    await networking().deleteNamespacedNetworkPolicy({ namespace, name: 'isolated-sandbox' });
    await untilPolicy('isolated', 'the policy re-created', (p) => p.metadata?.uid !== before.metadata?.uid);
  });

  it('gets it back as it was when it is changed to let everything in and out', async () => {
    await patchPolicy({ spec: { ingress: [{}], egress: [{}] } });
    const policy = await untilPolicy('isolated', 'the policy put back', (p) => p.spec?.ingress === undefined);
    expect(policy.spec?.egress?.[0]?.to?.[0]?.ipBlock?.except).toEqual([...BLOCKED_IPV4]);
  });

  it('gets it back ownerless when something owns it: an owner’s foreground cascade would delete it', async () => {
    // As earlier versions wrote it: controlled by the Sandbox, which a foreground deletion cascades to.
    const sandbox = await getSandbox(namespace, 'isolated');
    const owner = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: SANDBOX.kind,
      name: 'isolated',
      uid: sandbox?.metadata.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    };
    await patchPolicy({ metadata: { ownerReferences: [owner] } });
    await untilPolicy('isolated', 'the owner removed', (p) => p.metadata?.ownerReferences === undefined);
  });
});

/** The live reads the cache spares: a GET of the sandbox's policy by name, or of the API server's slice. */
const liveReads = (sandbox: string) =>
  requests.filter(
    (r) =>
      r.startsWith(
        `GET /apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies/${sandbox}-sandbox`,
      ) || r.startsWith('GET /apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes'),
  );
const writes = (sandbox: string) =>
  requests.filter(
    (r) =>
      (r.startsWith('POST ') || r.startsWith('PUT ')) &&
      r.includes(`/namespaces/${namespace}/networkpolicies`) &&
      (r.startsWith('POST ') || r.includes(`/networkpolicies/${sandbox}-sandbox`)),
  );

/** The sandbox controller's reconciles so far, and whether it has work queued or under way. */
const turns = async () => sandboxControllerActivity(await operator.port);

describe('the policy from the watch’s cache', () => {
  it('is re-created when deleted, at its watch event, without reading it or the slice live', async () => {
    const before = await untilPolicy('isolated', 'the policy', () => true);
    requests.length = 0;
    await networking().deleteNamespacedNetworkPolicy({ namespace, name: 'isolated-sandbox' });
    await untilPolicy('isolated', 'the policy re-created', (p) => p.metadata?.uid !== before.metadata?.uid);
    expect(writes('isolated')).toEqual([
      expect.stringMatching(
        new RegExp(`^POST /apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies`),
      ),
    ]);
    expect(liveReads('isolated')).toEqual([]);
  });

  it('is put back when changed, on the cached version, without reading it live', async () => {
    await untilPolicy('isolated', 'the policy', () => true);
    requests.length = 0;
    await patchPolicy({ spec: { ingress: [{}] } });
    await untilPolicy('isolated', 'the policy put back', (p) => p.spec?.ingress === undefined);
    expect(writes('isolated')).toEqual([expect.stringMatching(/^PUT .*\/networkpolicies\/isolated-sandbox/)]);
    expect(liveReads('isolated')).toEqual([]);
  });

  it('costs a turn of a sandbox whose policy stands no request for it', async () => {
    const policy = await untilPolicy('isolated', 'the policy', () => true);
    await eventually('the queue idle', async () => {
      const now = await turns();
      return now.busy === 0 ? now : pending(now);
    });
    const before = await turns();
    requests.length = 0;
    await touch('isolated', 'cached');
    // The touch's turn, finished: one more reconcile counted and the queue idle.
    await eventually('the touch’s turn', async () => {
      const now = await turns();
      return now.reconciles > before.reconciles && now.busy === 0 ? now : pending(now);
    });
    expect(liveReads('isolated')).toEqual([]);
    expect(writes('isolated')).toEqual([]);
    expect((await policyOf('isolated'))?.metadata?.resourceVersion).toBe(policy.metadata?.resourceVersion);
  });

  it('follows the API server’s endpoints when they change, with no change to the Sandbox', async () => {
    const { address, port } = await apiServerSlice();
    if (!wroteSlice) return; // a real cluster's slice is not the test's to change
    await kubectlOk([
      'patch',
      'endpointslice',
      'kubernetes',
      '-n',
      'default',
      '--type',
      'merge',
      '-p',
      JSON.stringify({
        endpoints: [{ addresses: [address, '192.0.2.11'], conditions: { ready: true } }],
      }),
    ]);
    const policy = await untilPolicy('isolated', 'the new address opened', (p) =>
      (p.spec?.egress ?? []).some((r) => r.to?.some((peer) => peer.ipBlock?.cidr === '192.0.2.11/32')),
    );
    expect(policy.spec?.egress?.[2]).toEqual({
      to: [{ ipBlock: { cidr: `${address}/32` } }, { ipBlock: { cidr: '192.0.2.11/32' } }],
      ports: [{ protocol: 'TCP', port }],
    });
  });
});

describe('an Unmanaged sandbox', () => {
  it('is managed anyway where no administrator allowed it', async () => {
    await createWithNetwork('open', { management: 'Unmanaged' });
    await untilPolicy('open', 'the policy of a sandbox not allowed Unmanaged', () => true);
  });

  it('loses the operator’s policy once the namespace allows it', async () => {
    // No change to the Sandbox: the namespace's label alone brings its turn.
    await kubectlOk(['label', 'namespace', namespace, `${NETWORK_UNMANAGED_LABEL}=allowed`]);
    await eventually('the policy removed', async () =>
      (await policyOf('open')) === undefined ? true : pending('still there'),
    );
    await createWithNetwork('open-from-start', { management: 'Unmanaged' });
    await untilSandbox(
      namespace,
      'open-from-start',
      'observed',
      (s) => (s.status?.observedGeneration ?? 0) > 0,
    );
    expect(await policyOf('open-from-start')).toBeUndefined();
  });

  it('gets it again once the administrator withdraws the label', async () => {
    await kubectlOk(['label', 'namespace', namespace, `${NETWORK_UNMANAGED_LABEL}-`]);
    await untilPolicy('open', 'the policy back', () => true);
  });
});

describe('the operator’s identity', () => {
  it('may not write a NetworkPolicy that is not a sandbox’s own', async () => {
    const asOperator = restrictedKubeConfig().makeApiClient(NetworkingV1Api);
    const refusal = await asOperator
      .createNamespacedNetworkPolicy({
        namespace,
        body: {
          metadata: { name: 'allow-all', labels: { [LABELS.sandbox]: 'isolated' } },
          spec: { podSelector: {}, ingress: [{}], egress: [{}], policyTypes: ['Ingress', 'Egress'] },
        },
      })
      .then(
        () => 'created',
        (error: unknown) => String((error as { body?: unknown }).body ?? error),
      );
    expect(refusal).toContain('the operator may write only the NetworkPolicies of sandboxes');
  });

  it('may open DNS at a single address (a node-local cache, --cluster-dns-address), no other UDP port nor a range', async () => {
    const asOperator = restrictedKubeConfig().makeApiClient(NetworkingV1Api);
    const withRule = (current: V1NetworkPolicy, ports: V1NetworkPolicyPort[]) =>
      ({
        ...current,
        spec: {
          ...current.spec,
          egress: [
            ...(current.spec?.egress ?? []),
            {
              to: [{ ipBlock: { cidr: '169.254.20.10/32' } }],
              ports,
            },
          ],
        },
      }) as V1NetworkPolicy;
    // The operator puts its own form back meanwhile: a replace on a version it changed conflicts, and is retried.
    const replaced = (ports: V1NetworkPolicyPort[]) =>
      eventually(`a replace opening ${JSON.stringify(ports)}`, async () => {
        const current = await untilPolicy('isolated', 'the policy', () => true);
        return asOperator
          .replaceNamespacedNetworkPolicy({
            namespace,
            name: 'isolated-sandbox',
            body: withRule(current, ports),
          })
          .then(
            () => 'replaced',
            (error: unknown) => {
              if ((error as { code?: number }).code === 409) return pending('conflict');
              return String((error as { body?: unknown }).body ?? error);
            },
          );
      });
    const refused = 'the operator may write only the NetworkPolicies of sandboxes';
    expect(
      await replaced([
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ]),
    ).toBe('replaced');
    expect(await replaced([{ protocol: 'UDP', port: 5353 }])).toContain(refused);
    expect(await replaced([{ protocol: 'TCP', port: 6443, endPort: 6500 }])).toContain(refused);
  });

  it('may not open the metadata range in a sandbox’s policy', async () => {
    const asOperator = restrictedKubeConfig().makeApiClient(NetworkingV1Api);
    const current = await untilPolicy('isolated', 'the policy', () => true);
    const opened = {
      ...current,
      spec: {
        ...current.spec,
        egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8'] } }] }],
      },
    } as V1NetworkPolicy;
    const refusal = await asOperator
      .replaceNamespacedNetworkPolicy({ namespace, name: 'isolated-sandbox', body: opened })
      .then(
        () => 'replaced',
        (error: unknown) => String((error as { body?: unknown }).body ?? error),
      );
    expect(refusal).toContain('the operator may write only the NetworkPolicies of sandboxes');
  });
});
