/**
 * Clients of the soak's actors. Every request of one operation carries that operation's user agent
 * (`soak/<namespace>/<op>/<kind>`), which the audit log records, so each event is attributed to the exact
 * operation that caused it.
 */
import { writeFile } from 'node:fs/promises';
import {
  CoreV1Api,
  createConfiguration,
  CustomObjectsApi,
  KubeConfig,
  NetworkingV1Api,
  PolicyV1Api,
  ServerConfiguration,
  setHeaderMiddleware,
  type ApiConstructor,
  type ApiType,
  type Cluster,
} from '@kubernetes/client-node';
import { SessionReferences } from '../../operator/client/session-references.ts';

/** The cluster reached at a loopback proxy over plain HTTP (client-node allows http only without TLS checks). */
function plainHttp(cluster: Cluster, server: string): Cluster {
  const { caData: _ca, caFile: _file, ...rest } = cluster;
  return { ...rest, server, skipTLSVerify: true };
}

/** A KubeConfig whose API clients send `userAgent`, optionally to another server (a proxy). */
class TaggedKubeConfig extends KubeConfig {
  constructor(
    base: KubeConfig,
    private readonly userAgent: string,
    private readonly server: string | undefined,
  ) {
    super();
    this.loadFromString(base.exportConfig());
    if (server !== undefined) {
      const cluster = this.getCurrentCluster();
      if (!cluster) throw new Error('kubeconfig has no current cluster');
      this.clusters = this.clusters.map((c) => (c.name === cluster.name ? plainHttp(c, server) : c));
    }
  }

  override makeApiClient<T extends ApiType>(apiClientType: ApiConstructor<T>): T {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    return new apiClientType(
      createConfiguration({
        baseServer: new ServerConfiguration(this.server ?? cluster.server, {}),
        authMethods: { default: this },
        middleware: [setHeaderMiddleware('User-Agent', this.userAgent)],
      }),
    );
  }
}

export type ActorClients = {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly policy: PolicyV1Api;
  readonly networking: NetworkingV1Api;
  /** operator/client, through the agent hosts' (delaying) proxy. */
  readonly references: SessionReferences;
};

export type Connections = {
  readonly admin: KubeConfig;
  /** The proxy agent hosts talk through (delays only, to widen race windows). */
  readonly agentProxy: string;
};

export function actorClients(connections: Connections, userAgent: string): ActorClients {
  const direct = new TaggedKubeConfig(connections.admin, userAgent, undefined);
  return {
    custom: direct.makeApiClient(CustomObjectsApi),
    core: direct.makeApiClient(CoreV1Api),
    policy: direct.makeApiClient(PolicyV1Api),
    networking: direct.makeApiClient(NetworkingV1Api),
    references: new SessionReferences(
      new TaggedKubeConfig(connections.admin, userAgent, connections.agentProxy),
      { userAgent },
    ),
  };
}

/** The operator's kubeconfig (its own identity) with the server replaced by the fault proxy. */
export async function writeProxiedKubeconfig(identity: string, proxy: string, path: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(identity);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`${identity} has no current cluster`);
  kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? plainHttp(c, proxy) : c));
  await writeFile(path, kc.exportConfig(), { mode: 0o600 });
}

/** The API server's address and CA, from a kubeconfig. */
export function apiServerOf(kc: KubeConfig): { server: URL; caPem: string } {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.caData) throw new Error('kubeconfig has no cluster with certificate-authority-data');
  return { server: new URL(cluster.server), caPem: Buffer.from(cluster.caData, 'base64').toString('utf8') };
}
