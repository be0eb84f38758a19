/** The plugin's ports over client-node, with the user's kubeconfig (its credentials, its RBAC). */
import {
  CoreV1Api,
  CustomObjectsApi,
  type CoreV1Event,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { GROUP, LABELS, SANDBOX, SESSION_REFERENCE, VERSION } from '../../api/names.ts';
import { parseSandbox, parseSessionReference } from '../../api/parse.ts';
import { statusOf } from '../../controller/errors.ts';
import { PluginError } from './errors.ts';
import type { EventSummary, PluginPorts, PodSummary } from './ports.ts';

/** Runs one read; 404 is a value (undefined), other failures a PluginError naming what was read. */
async function read<T>(what: string, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    const status = statusOf(error);
    if (status === 404) return undefined;
    if (status === 403)
      throw new PluginError('Forbidden', `reading ${what} was refused (HTTP 403): ${detail(error)}`, {
        cause: error,
      });
    throw new PluginError(
      'RequestFailed',
      `reading ${what} failed${status === undefined ? '' : ` (HTTP ${status})`}: ${detail(error)}`,
      { cause: error },
    );
  }
}

/** The API server's Status message when there is one, else the error's own. */
function detail(error: unknown): string {
  const body = typeof error === 'object' && error !== null && 'body' in error ? error.body : undefined;
  if (typeof body === 'string') {
    try {
      const message = (JSON.parse(body) as { message?: unknown }).message;
      if (typeof message === 'string') return message;
    } catch {
      return body.slice(0, 300);
    }
  }
  return error instanceof Error ? error.message : String(error);
}

const podSummary = (pod: V1Pod): PodSummary => ({
  name: pod.metadata?.name ?? '',
  phase: pod.status?.phase,
  deleting: pod.metadata?.deletionTimestamp !== undefined,
  finalizers: pod.metadata?.finalizers ?? [],
});

const eventSummary = (event: CoreV1Event): EventSummary => {
  const when =
    event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp ?? event.metadata.creationTimestamp;
  return {
    type: event.type ?? '',
    reason: event.reason ?? '',
    message: event.message ?? '',
    count: event.count ?? 1,
    lastSeen: when === undefined ? undefined : new Date(when),
  };
};

const seen = (event: EventSummary) => event.lastSeen?.getTime() ?? 0;

export function kubeReads(kubeConfig: KubeConfig): PluginPorts {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const at = (plural: string, namespace: string) => ({ group: GROUP, version: VERSION, plural, namespace });
  return {
    objects: {
      async sandbox(namespace, name) {
        const raw: unknown = await read(`${SANDBOX.kind} ${namespace}/${name}`, () =>
          custom.getNamespacedCustomObject({ ...at(SANDBOX.plural, namespace), name }),
        );
        return raw === undefined ? undefined : parseSandbox(raw);
      },
      async reference(namespace, name) {
        const raw: unknown = await read(`${SESSION_REFERENCE.kind} ${namespace}/${name}`, () =>
          custom.getNamespacedCustomObject({ ...at(SESSION_REFERENCE.plural, namespace), name }),
        );
        return raw === undefined ? undefined : parseSessionReference(raw);
      },
      async references(namespace, sandbox) {
        const list = (await read(`the SessionReferences of ${SANDBOX.kind} ${namespace}/${sandbox}`, () =>
          custom.listNamespacedCustomObject({
            ...at(SESSION_REFERENCE.plural, namespace),
            fieldSelector: `spec.sandbox=${sandbox}`,
          }),
        )) as { items?: unknown[] } | undefined;
        return (list?.items ?? []).map(parseSessionReference);
      },
      async pods(namespace, sandbox) {
        const list = await read(`the pods of ${SANDBOX.kind} ${namespace}/${sandbox}`, () =>
          core.listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` }),
        );
        return (list?.items ?? []).map(podSummary).sort((a, b) => a.name.localeCompare(b.name));
      },
    },
    events: {
      async events(namespace, kind, name) {
        const list = await read(`the Events of ${kind} ${namespace}/${name}`, () =>
          core.listNamespacedEvent({
            namespace,
            fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}`,
          }),
        );
        return (list?.items ?? []).map(eventSummary).sort((a, b) => seen(a) - seen(b));
      },
    },
  };
}
