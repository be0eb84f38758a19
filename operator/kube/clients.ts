/**
 * The one way the product talks to Kubernetes (docs/adr/0006-plain-json-kubernetes-io.md): plain-JSON
 * requests on client-node's configuration (server, authentication, exec plugins, proxies), pooled, with our
 * HTTP layer underneath; responses are read by our own bounded parse, never walked into generated models.
 */
import {
  PatchStrategy,
  ServerConfiguration,
  createConfiguration,
  setHeaderMiddleware,
  setHeaderOptions,
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

/** The clients; with `observe`, every HTTP request they make is reported (the rest_client_* metrics). */
export function kubeClients(config: KubeConfig, observe?: RequestObserver): KubeClients {
  return { config, json: jsonClientFor(config, observe) };
}

/**
 * The plain-JSON client alone, for callers that need no KubeConfig beside it: the sidecar, the agent hosts'
 * client, the chart's test.
 */
export function jsonClientFor(config: KubeConfig, observe?: RequestObserver): JsonClient {
  return jsonClient(pooledConfiguration(config, observe));
}

// What KubeConfig.makeApiClient builds, with pooled connections and (observed) our HTTP layer underneath.
function pooledConfiguration(config: KubeConfig, observe?: RequestObserver): Configuration {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: pooledAuthentication(config) },
    httpApi: observe ? meteredHttp(observe) : wrapHttpLibrary({ send: undiciSend }),
    middleware: [setHeaderMiddleware('User-Agent', FIELD_MANAGER)],
  });
}

// Strategic merge patch is refused by custom resources (415): always say which patch is meant.
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/** Our field manager, so managedFields show which writes are the operator's. */
export const FIELD_MANAGER = 'sandbox-operator';
