/** client-node API clients for one KubeConfig, and the PATCH content types custom resources accept. */
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  PolicyV1Api,
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
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly objects: KubernetesObjectApi;
  readonly policy: PolicyV1Api;
  readonly coordination: CoordinationV1Api;
  /** Requests whose responses are read as plain JSON (the hot paths: no generated-model walk). */
  readonly json: JsonClient;
};

/** The clients; with `observe`, every HTTP request they make is reported (the rest_client_* metrics). */
export function kubeClients(config: KubeConfig, observe?: RequestObserver): KubeClients {
  if (!observe)
    return {
      config,
      core: config.makeApiClient(CoreV1Api),
      custom: config.makeApiClient(CustomObjectsApi),
      objects: KubernetesObjectApi.makeApiClient(config),
      policy: config.makeApiClient(PolicyV1Api),
      coordination: config.makeApiClient(CoordinationV1Api),
      json: jsonClient(pooledConfiguration(config)),
    };
  const configuration = pooledConfiguration(config, observe);
  return {
    config,
    core: new CoreV1Api(configuration),
    custom: new CustomObjectsApi(configuration),
    objects: new MeteredObjectApi(configuration, config),
    policy: new PolicyV1Api(configuration),
    coordination: new CoordinationV1Api(configuration),
    json: jsonClient(configuration),
  };
}

/**
 * Plain-JSON requests for one KubeConfig, as the controller makes them (pooled connections, our HTTP layer),
 * for code that needs nothing else: the agent hosts' client, which names itself (`userAgent`) so that audit
 * logs never take its requests for the operator's.
 */
export const kubeJsonClient = (config: KubeConfig, userAgent: string): JsonClient =>
  jsonClient(pooledConfiguration(config, undefined, userAgent));

// KubernetesObjectApi.makeApiClient, on our configuration.
class MeteredObjectApi extends KubernetesObjectApi {
  constructor(configuration: Configuration, config: KubeConfig) {
    super(configuration);
    this.setDefaultNamespace(config);
  }
}

// What KubeConfig.makeApiClient builds, with pooled connections and (observed) our HTTP layer underneath.
function pooledConfiguration(
  config: KubeConfig,
  observe?: RequestObserver,
  userAgent: string = FIELD_MANAGER,
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

// Strategic merge patch is refused by custom resources (415): always say which patch is meant.
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/** Our field manager, so managedFields show which writes are the operator's. */
export const FIELD_MANAGER = 'sandbox-operator';
