/**
 * The two subjects of the claims bench, each "a warm pool of N, then claims" in its own kinds: the peer's
 * SandboxTemplate / SandboxWarmPool / SandboxClaim (extensions.agents.x-k8s.io, its controller with
 * `--extensions`) and ours (sandbox.agents.dev, docs/warm-pools.md). Both say Ready in the claim's
 * `status.conditions` and count a pool's ready sandboxes in `status.readyReplicas`.
 */
import type { LocalCluster } from '@sandbox-operator/local-cluster';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import {
  GROUP,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
  VERSION,
} from '../../../operator/api/names.ts';
import type { Clients } from '../controller/cluster.ts';
import { startAgentSandbox, startOurs, type Controller, type OursOptions } from '../peer/subjects.ts';

export const TEMPLATE = 'bench-template';
export const POOL = 'bench-pool';

type Kinds = { readonly group: string; readonly version: string };
/** Ours; the peer's kinds are spelled the same in their own group. */
type Plural = (typeof SANDBOX_TEMPLATE | typeof SANDBOX_WARM_POOL | typeof SANDBOX_CLAIM)['plural'];

export interface ClaimSubject {
  readonly name: 'agent-sandbox' | 'ours';
  /** null when the subject can run here, else why not (printed as its figures). */
  available(c: Clients): Promise<string | null>;
  start(cluster: LocalCluster, namespace: string): Promise<Controller>;
  /** The template and a pool of `replicas` made from it. */
  createPool(c: Clients, namespace: string, replicas: number): Promise<void>;
  /** The pool's `status.readyReplicas`; null while no controller has written the pool's status. */
  readyReplicas(c: Clients, namespace: string): Promise<number | null>;
  /** The i-th claim of the run, named `name`, against the pool. */
  claim(c: Clients, namespace: string, name: string, i: number): Promise<unknown>;
  /** The watch path of the subject's claims. */
  claimsPath(namespace: string): string;
}

const podSpec = () => ({ nodeName: kwokNodeName(0), containers: [{ name: 'agent', image: 'agent:1' }] });

function objects({ group, version }: Kinds) {
  const create = (c: Clients, namespace: string, plural: Plural, body: Record<string, unknown>) =>
    c.custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      body: { apiVersion: `${group}/${version}`, ...body },
    });
  const readyReplicas = async (c: Clients, namespace: string) => {
    const pool = (await c.custom.getNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: SANDBOX_WARM_POOL.plural,
      name: POOL,
    })) as { status?: { readyReplicas?: number } };
    // Both omit a zero readyReplicas; a controller's status has a field the API server does not default
    // (ours defaults observedGeneration to 0).
    const status: Record<string, unknown> = pool.status ?? {};
    const written = Object.entries(status).some(
      ([key, value]) => key !== 'observedGeneration' || value !== 0,
    );
    return written ? (pool.status?.readyReplicas ?? 0) : null;
  };
  /** Whether the API server serves every kind (discovery), else which are missing. */
  const served = async (c: Clients): Promise<string | null> => {
    const plurals: readonly Plural[] = [
      SANDBOX_TEMPLATE.plural,
      SANDBOX_WARM_POOL.plural,
      SANDBOX_CLAIM.plural,
    ];
    try {
      const list = await c.custom.getAPIResources({ group, version });
      const have = new Set(list.resources.map((r) => r.name));
      const missing = plurals.filter((p) => !have.has(p));
      return missing.length === 0 ? null : `${group}/${version} serves no ${missing.join(', ')}`;
    } catch (error: unknown) {
      return `${group}/${version} not served (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`;
    }
  };
  return {
    create,
    readyReplicas,
    served,
    claimsPath: (namespace: string) => `/apis/${group}/${version}/namespaces/${namespace}/sandboxclaims`,
  };
}

/** kubernetes-sigs/agent-sandbox's extensions, its controller built by ensurePeer (null binary: not built). */
export function peerClaims(binary: string | null, notBuilt: string): ClaimSubject {
  const kinds = objects({ group: 'extensions.agents.x-k8s.io', version: 'v1beta1' });
  return {
    name: 'agent-sandbox',
    available: async (c) => (binary === null ? notBuilt : kinds.served(c)),
    start: (cluster) => startAgentSandbox(binary!, cluster, { extensions: true }),
    async createPool(c, namespace, replicas) {
      await kinds.create(c, namespace, 'sandboxtemplates', {
        kind: 'SandboxTemplate',
        metadata: { name: TEMPLATE },
        spec: { podTemplate: { spec: podSpec() } },
      });
      await kinds.create(c, namespace, 'sandboxwarmpools', {
        kind: 'SandboxWarmPool',
        metadata: { name: POOL },
        spec: { replicas, sandboxTemplateRef: { name: TEMPLATE } },
      });
    },
    readyReplicas: kinds.readyReplicas,
    claim: (c, namespace, name) =>
      kinds.create(c, namespace, 'sandboxclaims', {
        kind: 'SandboxClaim',
        metadata: { name },
        spec: { warmPoolRef: { name: POOL } },
      }),
    claimsPath: kinds.claimsPath,
  };
}

/**
 * Our operator, run as the image runs it (startOurs), with the kinds of docs/warm-pools.md; where the API
 * server serves none of them (a build before them), `available` says so and the bench prints that.
 */
export function ourClaims(options: OursOptions): ClaimSubject {
  const kinds = objects({ group: GROUP, version: VERSION });
  return {
    name: 'ours',
    available: (c) => kinds.served(c),
    start: (_cluster, namespace) => startOurs(options, namespace),
    async createPool(c, namespace, replicas) {
      await kinds.create(c, namespace, SANDBOX_TEMPLATE.plural, {
        kind: SANDBOX_TEMPLATE.kind,
        metadata: { name: TEMPLATE },
        spec: { replicas: 1, podTemplate: { spec: podSpec() } },
      });
      await kinds.create(c, namespace, SANDBOX_WARM_POOL.plural, {
        kind: SANDBOX_WARM_POOL.kind,
        metadata: { name: POOL },
        spec: { replicas, templateRef: { name: TEMPLATE } },
      });
    },
    readyReplicas: kinds.readyReplicas,
    claim: (c, namespace, name, i) =>
      kinds.create(c, namespace, SANDBOX_CLAIM.plural, {
        kind: SANDBOX_CLAIM.kind,
        metadata: { name },
        spec: {
          warmPoolRef: { name: POOL },
          session: `workspace_bench_${i}`,
          worktree: `wt-${i}`,
          route: `shared-control-v1/bench/${i}`,
          role: 'Root',
        },
      }),
    claimsPath: kinds.claimsPath,
  };
}
