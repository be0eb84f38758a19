// Helpers for tests that talk to the cluster of the global setup.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { runKubectl, type KubectlOptions, type KubectlResult } from '@sandbox-operator/local-cluster';
import {
  POD_SECURITY_ENFORCE_LABEL,
  PRIVILEGED_REAPER_ALLOWED,
  PRIVILEGED_REAPER_LABEL,
} from '../../operator/api/reaper-shape.ts';
import './provided-context.ts';

export type { KubectlResult };

/** For client-node's generated clients in tests: say which patch is meant (custom resources refuse strategic merge). */
export const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

export interface KubectlCall extends KubectlOptions {
  /** Run as the restricted user instead of admin. */
  readonly restricted?: boolean;
}

/** Runs the built kubectl against the test cluster; never throws on a non-zero exit. */
export function kubectl(args: readonly string[], options: KubectlCall = {}): Promise<KubectlResult> {
  const kubeconfig = options.restricted === true ? inject('restrictedKubeconfig') : inject('kubeconfig');
  if (kubeconfig === null) throw new Error('this cluster has no restricted user (external cluster)');
  return runKubectl(inject('kubectl'), kubeconfig, args, options);
}

/** Like kubectl(), but a non-zero exit fails with kubectl's stderr. */
export async function kubectlOk(args: readonly string[], options: KubectlCall = {}): Promise<string> {
  const result = await kubectl(args, options);
  if (result.exitCode !== 0) {
    throw new Error(`kubectl ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  }
  return result.stdout;
}

export function kubeConfig(options: { restricted?: boolean } = {}): KubeConfig {
  const path = options.restricted === true ? inject('restrictedKubeconfig') : inject('kubeconfig');
  if (path === null) throw new Error('this cluster has no restricted user (external cluster)');
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/**
 * A namespace unique to the calling test file: created before its tests, deleted after them (the
 * namespace controller finishes the deletion in the background). Call at the top level of the file.
 */
export function testNamespace(prefix: string): string {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`.toLowerCase().slice(0, 63);
  beforeAll(async () => {
    await kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name } } });
  });
  afterAll(async () => {
    await kubeConfig().makeApiClient(CoreV1Api).deleteNamespace({ name });
  });
  return name;
}

/** A kubeconfig for the test cluster as ServiceAccount `account` (created here), with a TokenRequest token. */
export async function serviceAccountKubeConfig(namespace: string, account: string): Promise<KubeConfig> {
  const core = kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } });
  return accountTokenKubeConfig(namespace, account);
}

/**
 * A kubeconfig as ServiceAccount `account` (which must exist) with a TokenRequest token, bound to `pod` when
 * given, as the kubelet projects one: the API server then adds the pod's name to the user's extra
 * (`authentication.kubernetes.io/pod-name`) on every request the token makes.
 */
export async function accountTokenKubeConfig(
  namespace: string,
  account: string,
  pod?: { readonly name: string; readonly uid: string },
): Promise<KubeConfig> {
  const bound = pod === undefined ? {} : { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', ...pod } };
  const token = await kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespacedServiceAccountToken({
      name: account,
      namespace,
      body: { spec: { audiences: [], expirationSeconds: 3600, ...bound } },
    });
  const cluster = kubeConfig().getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, name: 'c' }],
    users: [{ name: account, token: token.status?.token ?? '' }],
    contexts: [{ name: 'c', cluster: 'c', user: account }],
    currentContext: 'c',
  });
  return kc;
}

/**
 * An administrator's opt-in of `namespace` to the shell reaper's Privileged (root) mode (docs/sidecar.md): the
 * two labels the operator reads before it builds the mode, and the operator bounds before they admit it.
 */
export const optInToRootReaper = (namespace: string) =>
  kubectlOk([
    'label',
    'namespace',
    namespace,
    `${POD_SECURITY_ENFORCE_LABEL}=privileged`,
    `${PRIVILEGED_REAPER_LABEL}=${PRIVILEGED_REAPER_ALLOWED}`,
  ]);
