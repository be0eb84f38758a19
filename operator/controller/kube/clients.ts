/** client-node API clients for one KubeConfig, and the PATCH content types custom resources accept. */
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';

export type KubeClients = {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly objects: KubernetesObjectApi;
  readonly policy: PolicyV1Api;
  readonly coordination: CoordinationV1Api;
};

export function kubeClients(config: KubeConfig): KubeClients {
  return {
    config,
    core: config.makeApiClient(CoreV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(config),
    policy: config.makeApiClient(PolicyV1Api),
    coordination: config.makeApiClient(CoordinationV1Api),
  };
}

// Strategic merge patch is refused by custom resources (415): always say which patch is meant.
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/** Our field manager, so managedFields show which writes are the operator's. */
export const FIELD_MANAGER = 'sandbox-operator';
