/**
 * The one way the product talks to Kubernetes (docs/adr/0006-plain-json-kubernetes-io.md): plain-JSON
 * requests on client-node's configuration (server, authentication, exec plugins, proxies), pooled, with our
 * HTTP layer underneath; responses are read by our own bounded parse, never walked into generated models.
 */
import {
  ServerConfiguration,
  createConfiguration,
  setHeaderMiddleware,
  wrapHttpLibrary,
  type Configuration,
  type KubeConfig,
} from '@kubernetes/client-node';
import { meteredHttp, type RequestObserver } from './metered-http.ts';
import { jsonClient, type JsonClient } from './plain-json.ts';
import { pooledAuthentication } from './pooled-auth.ts';
import { undiciSend } from './undici-http.ts';

export type KubeClients = {
  readonly config: KubeConfig;
  /** Requests whose responses are read as plain JSON. */
  readonly json: JsonClient;
};

/** The operator's clients; with `observe`, every HTTP request they make is reported (rest_client_*). */
export function kubeClients(config: KubeConfig, observe?: RequestObserver): KubeClients {
  return { config, json: jsonClientFor(config, observe === undefined ? {} : { observe }) };
}

export type JsonClientOptions = {
  readonly observe?: RequestObserver;
  /**
   * Who the requests say they are (default: the operator, FIELD_MANAGER). Anything that is not the operator
   * names itself, the agent hosts' client and the shell reaper included, so that audit logs and the API
   * server's metrics never take its requests for the operator's.
   */
  readonly userAgent?: string;
};

/** The plain-JSON client alone, for callers that need no KubeConfig beside it. */
export function jsonClientFor(config: KubeConfig, options: JsonClientOptions = {}): JsonClient {
  return jsonClient(pooledConfiguration(config, options));
}

// What KubeConfig.makeApiClient builds, with pooled connections and (observed) our HTTP layer underneath.
function pooledConfiguration(
  config: KubeConfig,
  { observe, userAgent = FIELD_MANAGER }: JsonClientOptions,
): Configuration {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: pooledAuthentication(config) },
    httpApi: observe ? meteredHttp(observe) : wrapHttpLibrary({ send: undiciSend }),
    middleware: [setHeaderMiddleware('User-Agent', userAgent)],
  });
}

/** Our field manager, so managedFields show which writes are the operator's. */
export const FIELD_MANAGER = 'sandbox-operator';
