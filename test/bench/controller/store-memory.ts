/**
 * The cache's own heap, without a control plane: 10,000 Sandboxes, 10,000 sandbox pods, 10,000 eviction guards
 * and 100,000 SessionReferences shaped as the API server sends them (managedFields, a pod's spec and status),
 * each JSON-parsed on its own as a watch event is, fed to the store's sinks; heap used after a full GC, against
 * the same process before. Isolates what the store keeps from what the operator's process costs around it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { API_VERSION, GROUP, LABELS, SANDBOX, SESSION_REFERENCE } from '../../../operator/api/names.ts';
import { ClusterStore } from '../../../operator/controller/cache/store.ts';
import { figure, heading } from '../report.ts';

const SANDBOXES = Number(process.env['BENCH_MEMORY_SANDBOXES'] ?? 10_000);
const REFERENCES_PER_SANDBOX = 10;
const NAMESPACE = 'bench-mem-store';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const managedFields = (manager: string, fields: Record<string, unknown>) => [
  {
    manager,
    operation: 'Update',
    apiVersion: 'v1',
    time: '2026-12-01T12:00:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
  },
];

const meta = (name: string, i: number, extra: Record<string, unknown> = {}) => ({
  name,
  namespace: NAMESPACE,
  uid: `0b7c${String(i).padStart(4, '0')}-1f2e-4d5c-9a8b-${String(i).padStart(12, '0')}`,
  resourceVersion: String(100_000 + i),
  generation: 1,
  creationTimestamp: '2026-12-01T12:00:00Z',
  ...extra,
});

function sandbox(name: string, i: number) {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX.kind,
    metadata: meta(name, i, {
      finalizers: [`${GROUP}/exclusivity`],
      managedFields: managedFields('kubectl', { 'f:spec': { 'f:replicas': {}, 'f:worktree': {} } }),
    }),
    spec: {
      worktree: 'wt-1',
      replicas: 1,
      podTemplate: { spec: { containers: [{ name: 'agent', image: 'agent:1' }] } },
    },
    status: {
      observedGeneration: 1,
      phase: 'Pending',
      ready: '0/1',
      pods: { total: 1, ready: 0 },
      references: { attached: 6, detached: 4, foreign: 5, bytes: 1200 },
    },
  };
}

function pod(sandboxName: string, i: number) {
  const name = `${sandboxName}-0`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(name, i, {
      labels: { [LABELS.sandbox]: sandboxName, [LABELS.podIndex]: '0' },
      ownerReferences: [
        { apiVersion: API_VERSION, kind: SANDBOX.kind, name: sandboxName, uid: 'u', controller: true },
      ],
      finalizers: [`${GROUP}/exclusivity`],
      managedFields: managedFields('sandbox-operator', {
        'f:metadata': { 'f:labels': { [`f:${LABELS.sandbox}`]: {} }, 'f:finalizers': {} },
        'f:spec': { 'f:containers': { 'k:{"name":"agent"}': { 'f:image': {}, 'f:name': {} } } },
      }),
    }),
    spec: {
      containers: [
        {
          name: 'agent',
          image: 'agent:1',
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
          volumeMounts: [
            {
              name: 'kube-api-access-abcde',
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      volumes: [{ name: 'kube-api-access-abcde', projected: { defaultMode: 420, sources: [] } }],
    },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', lastTransitionTime: '2026-12-01T12:00:00Z' }],
      qosClass: 'BestEffort',
    },
  };
}

function budget(sandboxName: string, i: number) {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(`${sandboxName}-sandbox`, i, {
      labels: { [LABELS.sandbox]: sandboxName },
      managedFields: managedFields('sandbox-operator', { 'f:spec': { 'f:maxUnavailable': {} } }),
    }),
    spec: { maxUnavailable: 0, selector: { matchLabels: { [LABELS.sandbox]: sandboxName } } },
    status: { currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 1 },
  };
}

function reference(sandboxName: string, i: number, j: number) {
  return {
    apiVersion: API_VERSION,
    kind: SESSION_REFERENCE.kind,
    metadata: meta(`${sandboxName}-r${j}`, i * REFERENCES_PER_SANDBOX + j, {
      managedFields: managedFields('agent-host', {
        'f:spec': { 'f:sandbox': {}, 'f:session': {}, 'f:worktree': {}, 'f:route': {}, 'f:state': {} },
      }),
    }),
    spec: {
      sandbox: sandboxName,
      session: `workspace_${sandboxName}_${j}`,
      worktree: j % 2 === 0 ? 'wt-1' : 'wt-2',
      route: `shared-control-v1/${sandboxName}/${j}`,
      role: 'Root',
      state: j % 3 === 0 ? 'Detached' : 'Attached',
    },
  };
}

/** Each object arrives as its own JSON text, as a watch event does: no strings shared between objects. */
const asEvent = (object: unknown): unknown => JSON.parse(JSON.stringify(object));

/** What the watcher does with each event: decode the object as it arrives, then apply it. */
const arrive = <T>(sink: { decode(raw: unknown): T; apply(type: 'ADDED', item: T): void }, raw: unknown) =>
  sink.apply('ADDED', sink.decode(raw));

const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export async function storeMemoryBenchmarks(): Promise<void> {
  heading(
    `The store's heap: ${SANDBOXES} sandboxes, pods and guards, ${SANDBOXES * REFERENCES_PER_SANDBOX} references (no control plane)`,
  );
  const before = heapUsed();
  const store = new ClusterStore(() => undefined);
  for (let i = 0; i < SANDBOXES; i++) {
    const name = `sbx-${String(i).padStart(5, '0')}`;
    arrive(store.sandboxSink, asEvent(sandbox(name, i)));
    arrive(store.podSink, asEvent(pod(name, i)));
    arrive(store.budgetSink, asEvent(budget(name, i)));
    for (let j = 0; j < REFERENCES_PER_SANDBOX; j++)
      arrive(store.referenceSink, asEvent(reference(name, i, j)));
    // Let a turn's worth of garbage go as the operator's event loop would.
    if (i % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
  }
  const after = heapUsed();
  const objects = SANDBOXES * (3 + REFERENCES_PER_SANDBOX);
  figure('heap used by the cache', mib(after - before), `${((after - before) / objects) | 0} B/object`);
  const counts = store.counts;
  figure('cached', `${counts.sandboxes + counts.pods + counts.references}`, 'sandboxes + pods + references');
}
