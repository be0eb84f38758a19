// How pods on the real node reach the API server, with no kube-proxy and traffic kept on loopback: a
// MutatingAdmissionPolicy of the local control plane (never of the product) puts the pods that talk to
// the API server on the host network and points their in-cluster clients at 127.0.0.1:<port>. Those
// pods are the ones carrying the shell reaper and the chart's operator pods, and only when no node is
// named yet (pods bound to a kwok node stay as they were).
import { stringify } from 'yaml';

export const LOOPBACK_API_POLICY = 'sandbox-operator-local-loopback-api';
/**
 * The API server runs without the ServiceAccount admission plugin (no token controller here), so no pod
 * gets its token mounted; this policy mounts one, as that plugin would, into the chart's operator pods.
 */
export const SERVICE_ACCOUNT_TOKEN_POLICY = 'sandbox-operator-local-service-account-token';
const TOKEN_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The policy and its binding (pure). */
export function loopbackApiPolicy(apiPort: number): string {
  const envOf = (list: string) =>
    `[Object.spec.${list}.env{name: "KUBERNETES_SERVICE_HOST", value: "127.0.0.1"}, Object.spec.${list}.env{name: "KUBERNETES_SERVICE_PORT", value: "${String(apiPort)}"}]`;
  const env = envOf('containers');
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: LOOPBACK_API_POLICY },
    spec: {
      failurePolicy: 'Fail',
      reinvocationPolicy: 'Never',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] },
        ],
      },
      matchConditions: [
        { name: 'unbound', expression: "!has(object.spec.nodeName) || object.spec.nodeName == ''" },
        // A dry run runs nothing, so it needs no route: it shows the pod as the product made it (what
        // test/e2e/real-node/pod-security.test.ts judges), not with this machine's host network.
        { name: 'runs', expression: '!request.dryRun' },
        // Made by a controller (a Sandbox, a ReplicaSet): never a pod someone submits directly, e.g. helm's test hooks.
        { name: 'owned', expression: 'size(object.metadata.?ownerReferences.orValue([])) > 0' },
        {
          name: 'talks-to-the-api-server',
          expression:
            "object.spec.containers.exists(c, c.name == 'shell-reaper') || " +
            // The shell reaper is a native sidecar: an init container that keeps running.
            "object.spec.?initContainers.orValue([]).exists(c, c.name == 'shell-reaper') || " +
            "(has(object.metadata.labels) && object.metadata.labels[?'app.kubernetes.io/name'].orValue('') == 'sandbox-operator')",
        },
      ],
      mutations: [
        {
          patchType: 'ApplyConfiguration',
          applyConfiguration: {
            expression: `Object{spec: Object.spec{hostNetwork: true, containers: object.spec.containers.map(c, Object.spec.containers{name: c.name, env: ${env}})}}`,
          },
        },
        {
          patchType: 'ApplyConfiguration',
          applyConfiguration: {
            expression: `has(object.spec.initContainers) ? Object{spec: Object.spec{initContainers: object.spec.initContainers.map(c, Object.spec.initContainers{name: c.name, env: ${envOf('initContainers')}})}} : Object{}`,
          },
        },
      ],
    },
  };
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingAdmissionPolicyBinding',
    metadata: { name: LOOPBACK_API_POLICY },
    spec: { policyName: LOOPBACK_API_POLICY },
  };
  return [policy, binding, ...serviceAccountTokenPolicy()].map((doc) => stringify(doc)).join('---\n');
}

function serviceAccountTokenPolicy(): object[] {
  const volume = 'kube-api-access-local';
  const sources = 'Object.spec.volumes.projected.sources';
  const tokenVolume =
    `Object.spec.volumes{name: "${volume}", projected: Object.spec.volumes.projected{sources: [` +
    `${sources}{serviceAccountToken: ${sources}.serviceAccountToken{path: "token", expirationSeconds: 3607}}, ` +
    `${sources}{configMap: ${sources}.configMap{name: "kube-root-ca.crt", items: [${sources}.configMap.items{key: "ca.crt", path: "ca.crt"}]}}, ` +
    `${sources}{downwardAPI: ${sources}.downwardAPI{items: [${sources}.downwardAPI.items{path: "namespace", fieldRef: ${sources}.downwardAPI.items.fieldRef{fieldPath: "metadata.namespace"}}]}}` +
    `]}}`;
  const tokenMount = `Object.spec.containers.volumeMounts{name: "${volume}", mountPath: "${TOKEN_DIR}", readOnly: true}`;
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: SERVICE_ACCOUNT_TOKEN_POLICY },
    spec: {
      failurePolicy: 'Fail',
      reinvocationPolicy: 'Never',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] },
        ],
      },
      matchConditions: [
        { name: 'unbound', expression: "!has(object.spec.nodeName) || object.spec.nodeName == ''" },
        // A dry run runs nothing, so it needs no route: it shows the pod as the product made it (what
        // test/e2e/real-node/pod-security.test.ts judges), not with this machine's host network.
        { name: 'runs', expression: '!request.dryRun' },
        // Made by a controller (a Sandbox, a ReplicaSet): never a pod someone submits directly, e.g. helm's test hooks.
        { name: 'owned', expression: 'size(object.metadata.?ownerReferences.orValue([])) > 0' },
        {
          name: 'operator-pod',
          expression:
            "has(object.metadata.labels) && object.metadata.labels[?'app.kubernetes.io/name'].orValue('') == 'sandbox-operator' && " +
            "!object.spec.containers.exists(c, c.name == 'shell-reaper') && object.spec.?automountServiceAccountToken.orValue(true)",
        },
      ],
      // JSON Patch: an apply configuration may not set the volume's atomic lists. The chart's operator pod
      // has one container; it gets the mount.
      mutations: [
        {
          patchType: 'JSONPatch',
          jsonPatch: {
            expression:
              `(has(object.spec.volumes) ? [JSONPatch{op: "add", path: "/spec/volumes/-", value: ${tokenVolume}}] : [JSONPatch{op: "add", path: "/spec/volumes", value: [${tokenVolume}]}]) + ` +
              `(has(object.spec.containers[0].volumeMounts) ? [JSONPatch{op: "add", path: "/spec/containers/0/volumeMounts/-", value: ${tokenMount}}] : [JSONPatch{op: "add", path: "/spec/containers/0/volumeMounts", value: [${tokenMount}]}])`,
          },
        },
      ],
    },
  };
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingAdmissionPolicyBinding',
    metadata: { name: SERVICE_ACCOUNT_TOKEN_POLICY },
    spec: { policyName: SERVICE_ACCOUNT_TOKEN_POLICY },
  };
  return [policy, binding];
}
